/**
 * GHASH, the authenticator of AES-GCM (NIST SP 800-38D, 6.4), for batched-gcm.ts: multiplication
 * by the hash key H in GF(2^128) through 16 tables of 256 products, one per byte position of a
 * block (Shoup's 8-bit tables: a block costs 16 lookups and no reduction, 64 KiB per key).
 *
 * Hand-written because the audited library was measured too slow here: @noble/ciphers 2.4's
 * GHASH (its tables built once per key and reused, windows of 2, 4 and 8 bits) took 4.4-10.5 µs
 * for a token's 224 bytes, this 0.9-1.8 µs, in the same process taking turns (2026-11-26 15:52,
 * load 9; same digests): its tables are objects and its loop allocates, where a whole token's
 * budget is 5 µs.
 *
 * Words are 32-bit in memory order (an Int32Array over the bytes), so a block is 4 words read as
 * they lie: the caller checks the machine is little-endian (`LITTLE_ENDIAN`), the tables are laid
 * out for that, and a state written back through an Int32Array is GHASH's bytes.
 */

/** Whether 32-bit words are stored low byte first: the layout these tables assume. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

const byteSwap = (v: number) => ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24);

/**
 * The tables of hash key `h` (16 bytes): entry (position i, byte b) is the product of the block
 * holding b at byte i (zeros elsewhere) with H, 4 words in memory order.
 */
export function ghashTables(h: Uint8Array): Int32Array {
  const view = new DataView(h.buffer, h.byteOffset, 16);
  let v0 = view.getInt32(0), v1 = view.getInt32(4), v2 = view.getInt32(8), v3 = view.getInt32(12);
  // H·x^k for k = 0..127, big-endian words: GCM's bit 0 is the first byte's high bit, so
  // multiplying by x shifts right and folds the bit shifted out back in as R = 0xe1 || 0^120.
  const powers = new Int32Array(128 * 4);
  for (let k = 0; k < 128; k++) {
    powers.set([v0, v1, v2, v3], 4 * k);
    const carry = v3 & 1;
    v3 = (v3 >>> 1) | (v2 << 31);
    v2 = (v2 >>> 1) | (v1 << 31);
    v1 = (v1 >>> 1) | (v0 << 31);
    v0 = (v0 >>> 1) ^ (carry === 1 ? 0xe1000000 : 0);
  }
  const tables = new Int32Array(16 * 256 * 4);
  for (let i = 0; i < 16; i++) {
    for (let b = 1; b < 256; b++) {
      // b's lowest set bit is GCM's bit 7 - log2(it) of byte i; the rest of b is an entry made already.
      const low = b & -b;
      const power = (8 * i + 7 - (31 - Math.clz32(low))) * 4;
      const rest = (i * 256 + (b ^ low)) * 4;
      const entry = (i * 256 + b) * 4;
      for (let w = 0; w < 4; w++) tables[entry + w] = tables[rest + w] ^ powers[power + w];
    }
  }
  // Big-endian words to memory order (LITTLE_ENDIAN machines only use these).
  for (let i = 0; i < tables.length; i++) tables[i] = byteSwap(tables[i]);
  return tables;
}

/**
 * Absorbs the 16-byte blocks `words[from..to)` (a multiple of 4 words, memory order) into the
 * state `y` (4 words): y = (y ⊕ block) · H for each block.
 */
export function ghashBlocks(t: Int32Array, y: Int32Array, words: Int32Array, from: number, to: number): void {
  let y0 = y[0], y1 = y[1], y2 = y[2], y3 = y[3];
  for (let p = from; p < to; p += 4) {
    const x0 = y0 ^ words[p], x1 = y1 ^ words[p + 1], x2 = y2 ^ words[p + 2], x3 = y3 ^ words[p + 3];
    // Byte i of the block is byte (i & 3) of word i >> 2, the low byte first; entry (i, b) is at (i·256 + b)·4.
    let o = (x0 & 255) << 2;
    let z0 = t[o], z1 = t[o + 1], z2 = t[o + 2], z3 = t[o + 3];
    o = (256 + ((x0 >>> 8) & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (512 + ((x0 >>> 16) & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (768 + (x0 >>> 24)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (1024 + (x1 & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (1280 + ((x1 >>> 8) & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (1536 + ((x1 >>> 16) & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (1792 + (x1 >>> 24)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (2048 + (x2 & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (2304 + ((x2 >>> 8) & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (2560 + ((x2 >>> 16) & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (2816 + (x2 >>> 24)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (3072 + (x3 & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (3328 + ((x3 >>> 8) & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (3584 + ((x3 >>> 16) & 255)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    o = (3840 + (x3 >>> 24)) << 2; z0 ^= t[o]; z1 ^= t[o + 1]; z2 ^= t[o + 2]; z3 ^= t[o + 3];
    y0 = z0; y1 = z1; y2 = z2; y3 = z3;
  }
  y[0] = y0; y[1] = y1; y[2] = y2; y[3] = y3;
}
