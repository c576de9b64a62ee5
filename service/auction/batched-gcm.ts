/**
 * AES-256-GCM sealing (NIST SP 800-38D, 96-bit IVs) with the AES work done in batches: the
 * standard construction, computed in another order, so node:crypto's decipher opens every token.
 *
 * Why: a token sealed with `createCipheriv("aes-256-gcm")` cost 10-15 µs, 5-9 µs of it the
 * cipher object each IV needs before a byte is sealed; the goal is 5 µs per auction. GCM is CTR
 * keystream plus GHASH, and the keystream depends only on the key and the IV, not on the
 * plaintext. So one long-lived AES-256-ECB cipher per key encrypts, in one `update()`, the counter
 * blocks of 256 tokens' random IVs: for each, E(K, J0) (the tag's mask) and E(K, J0+1…) (the
 * data's keystream). A token then costs an XOR, GHASH (ghash.ts) and the base64url text.
 *
 * Each IV slot is used once and the batch is drawn again when all are used: a keystream never
 * serves two tokens. The slot's length follows the longest token of the previous batch (a
 * longer one gets the rest of its keystream from the same counters, one more `update()`).
 */
import { createCipheriv, randomFillSync, type Cipher, type KeyObject } from "node:crypto";
import { ghashBlocks, ghashTables } from "./ghash.js";

/** IV slots per batch: one random draw and one AES call per 256 tokens. */
export const BATCH_SLOTS = 256;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bounds of a slot, in 16-byte blocks (the first is the tag's mask): 7-63 blocks of data each. */
const MIN_SLOT_BLOCKS = 8;
const MAX_SLOT_BLOCKS = 64;

const byteSwap = (v: number) => ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24);

/** Int32 words over a Buffer of its own (offset 0, so aligned). */
function wordBuffer(bytes: number): { bytes: Buffer; words: Int32Array } {
  const buffer = Buffer.allocUnsafeSlow(bytes);
  return { bytes: buffer, words: new Int32Array(buffer.buffer, buffer.byteOffset, bytes >> 2) };
}

/** Seals under one key and one AAD: `seal` returns iv ‖ ciphertext ‖ tag in base64url. */
export class BatchedGcm {
  private readonly ecb: Cipher;
  private readonly tables: Int32Array;
  /** GHASH's state after the AAD (the same for every token). */
  private readonly afterAad = new Int32Array(4);
  private readonly aadBits: number;
  private readonly fillIvs: (ivs: Buffer) => void;
  private readonly ivs = wordBuffer(BATCH_SLOTS * IV_BYTES);
  private keystream: Int32Array = new Int32Array(0);
  private slotBlocks = 24;
  private slot = BATCH_SLOTS;
  /** Blocks the longest token of this batch needed, for the next batch's slots. */
  private longest = 0;
  private scratch = wordBuffer(4096);
  /** The last writer's buffer given to `sealWritten`, and its words. */
  private writerBytes: Buffer | undefined;
  private writerWords: Int32Array = new Int32Array(0);
  /** The counter blocks of a batch, kept for the next one of the same size. */
  private counters = wordBuffer(0);
  private readonly state = new Int32Array(4);

  /** `fillIvs` draws the batch's IVs (tests give their own); randomFillSync by default. */
  constructor(key: KeyObject | Buffer, aad: Buffer, fillIvs: (ivs: Buffer) => void = randomFillSync) {
    this.ecb = createCipheriv("aes-256-ecb", key, null).setAutoPadding(false);
    this.tables = ghashTables(this.ecb.update(Buffer.alloc(16)));
    this.fillIvs = fillIvs;
    const padded = wordBuffer(Math.ceil(aad.length / 16) * 16);
    padded.bytes.fill(0);
    aad.copy(padded.bytes);
    ghashBlocks(this.tables, this.afterAad, padded.words, 0, padded.words.length);
    this.aadBits = aad.length * 8;
  }

  /** The sealed body of a text's UTF-8 bytes, or of bytes, in base64url. */
  seal(plaintext: string | Buffer): string {
    const most = typeof plaintext === "string" ? plaintext.length * 3 : plaintext.length;
    if (most + IV_BYTES + TAG_BYTES + 16 > this.scratch.bytes.length) this.scratch = wordBuffer(Math.ceil((most + IV_BYTES + TAG_BYTES + 16) / 16) * 16);
    const { bytes, words } = this.scratch;
    const length = typeof plaintext === "string" ? bytes.write(plaintext, IV_BYTES, "utf8") : plaintext.copy(bytes, IV_BYTES);
    return this.sealAt(bytes, words, length);
  }

  /**
   * Seals, in place, what a writer holds from byte 12 (`IV_BYTES`, left free for the IV) to its
   * position: claims written there are not copied (a copy was 5 % of a token's seal). The
   * writer's buffer must start a memory word (Buffer.allocUnsafeSlow's do); its bytes are the
   * token's body afterwards.
   */
  sealWritten(w: { bytes: Buffer; at: number; room(n: number): void }): string {
    const length = w.at - IV_BYTES;
    // The last block's padding and the lengths block are written after the data.
    w.room(32);
    const bytes = w.bytes;
    if (bytes !== this.writerBytes) {
      if (bytes.byteOffset % 4 !== 0) throw new RangeError("a writer's buffer must start a 32-bit word");
      this.writerBytes = bytes;
      this.writerWords = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
    }
    return this.sealAt(bytes, this.writerWords, length);
  }

  /** Seals the `length` bytes at `IV_BYTES` of `bytes` (`words` over the same memory, with 32 bytes to spare after them). */
  private sealAt(bytes: Buffer, words: Int32Array, length: number): string {
    if (this.slot === BATCH_SLOTS) this.refill();
    const slot = this.slot++;
    const blocks = (length + 15) >> 4;
    if (blocks >= 0x3fffffff) throw new RangeError("too long for one GCM seal");
    if (blocks > this.longest) this.longest = blocks;
    const iv = this.ivs.words;
    words[0] = iv[3 * slot];
    words[1] = iv[3 * slot + 1];
    words[2] = iv[3 * slot + 2];
    // The data's keystream: counter 2 onwards of the slot, and past the slot's end when it is too short.
    const start = slot * this.slotBlocks * 4;
    const inSlot = Math.min(blocks, this.slotBlocks - 1) * 4;
    const keystream = this.keystream;
    for (let w = 0; w < inSlot; w++) words[3 + w] ^= keystream[start + 4 + w];
    if (inSlot < blocks * 4) {
      const more = this.extraKeystream(slot, blocks);
      for (let w = inSlot; w < blocks * 4; w++) words[3 + w] ^= more[w - inSlot];
    }
    // The last block's padding is zeros for GHASH (the XOR above filled it with keystream); a loop, as fill's call costs more.
    for (let b = IV_BYTES + length; b < IV_BYTES + blocks * 16; b++) bytes[b] = 0;
    const y = this.state;
    y.set(this.afterAad);
    ghashBlocks(this.tables, y, words, 3, 3 + blocks * 4);
    // The lengths block: AAD and ciphertext in bits, 64-bit big-endian each.
    const end = 3 + blocks * 4;
    words[end] = 0;
    words[end + 1] = byteSwap(this.aadBits);
    words[end + 2] = byteSwap(Math.floor(length / 0x20000000));
    words[end + 3] = byteSwap((length * 8) >>> 0);
    ghashBlocks(this.tables, y, words, end, end + 4);
    const tag = IV_BYTES + length;
    for (let w = 0; w < 4; w++) bytes.writeInt32LE(y[w] ^ keystream[start + w], tag + 4 * w);
    return bytes.toString("base64url", 0, tag + TAG_BYTES);
  }

  /** New IVs and the keystream of their slots, sized for the longest token of the last batch. */
  private refill(): void {
    this.slotBlocks = Math.min(MAX_SLOT_BLOCKS, Math.max(MIN_SLOT_BLOCKS, this.longest + 1));
    this.longest = 0;
    this.fillIvs(this.ivs.bytes);
    if (this.counters.bytes.length !== BATCH_SLOTS * this.slotBlocks * 16) this.counters = wordBuffer(BATCH_SLOTS * this.slotBlocks * 16);
    const counters = this.counters;
    const iv = this.ivs.words;
    for (let slot = 0, w = 0; slot < BATCH_SLOTS; slot++) {
      const a = iv[3 * slot], b = iv[3 * slot + 1], c = iv[3 * slot + 2];
      // J0 = IV ‖ 1 (the tag's mask), then IV ‖ 2, 3, …: the counter is big-endian.
      for (let counter = 1; counter <= this.slotBlocks; counter++, w += 4) {
        counters.words[w] = a;
        counters.words[w + 1] = b;
        counters.words[w + 2] = c;
        counters.words[w + 3] = byteSwap(counter);
      }
    }
    this.keystream = this.encrypt(counters.bytes);
    this.slot = 0;
  }

  /** Keystream words of data blocks `slotBlocks - 1 .. blocks - 1` of a slot's IV (counters slotBlocks + 1 …). */
  private extraKeystream(slot: number, blocks: number): Int32Array {
    const count = blocks - (this.slotBlocks - 1);
    const counters = wordBuffer(count * 16);
    const iv = this.ivs.words;
    for (let i = 0; i < count; i++) {
      counters.words.set([iv[3 * slot], iv[3 * slot + 1], iv[3 * slot + 2], byteSwap(this.slotBlocks + 1 + i)], 4 * i);
    }
    return this.encrypt(counters.bytes);
  }

  private encrypt(counters: Buffer): Int32Array {
    const out = this.ecb.update(counters);
    if (out.byteOffset % 4 === 0) return new Int32Array(out.buffer, out.byteOffset, out.length >> 2);
    const aligned = wordBuffer(out.length);
    out.copy(aligned.bytes);
    return aligned.words;
  }
}
