import { createDecipheriv, randomBytes, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { BATCH_SLOTS, BatchedGcm } from "../../service/auction/batched-gcm.js";
import { sealKey, sealOnce, SealKeyRing } from "../../service/auction/token-seal.js";

/** Known answers of AES-256-GCM with 96-bit IVs (McGrew and Viega's GCM test cases 13-16, in hex). */
const knownAnswers: { name: string; key: string; iv: string; plaintext: string; aad: string; ciphertext: string; tag: string }[] = JSON.parse(
  readFileSync(new URL("../fixtures/gcm/aes-256-known-answers.json", import.meta.url), "utf8"),
);

/** Opens iv ‖ ciphertext ‖ tag (base64url) with node:crypto's own AES-256-GCM decipher: throws unless it authenticates. */
function openWithNode(key: KeyObject | Buffer, aad: Buffer, sealed: string): Buffer {
  const body = Buffer.from(sealed, "base64url");
  const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, 12));
  decipher.setAAD(aad);
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]);
}

/** IVs 0, 1, 2, … (big-endian in the last 4 bytes): unique, and the test can tell which slot sealed what. */
function countingIvs() {
  let next = 0;
  let draws = 0;
  const fill = (ivs: Buffer) => {
    draws++;
    ivs.fill(0);
    for (let i = 0; i < ivs.length / 12; i++) ivs.writeUInt32BE(next++, 12 * i + 8);
  };
  return { fill, draws: () => draws };
}

describe("batched AES-256-GCM", () => {
  test.each(knownAnswers)("known answer: $name", ({ key, iv, plaintext, aad, ciphertext, tag }) => {
    // Every slot of the batch gets the vector's IV (a test only: a real batch never repeats one).
    const gcm = new BatchedGcm(Buffer.from(key, "hex"), Buffer.from(aad, "hex"), (ivs) => {
      for (let i = 0; i < ivs.length; i += 12) Buffer.from(iv, "hex").copy(ivs, i);
    });
    expect(Buffer.from(gcm.seal(Buffer.from(plaintext, "hex")), "base64url").toString("hex")).toBe(iv + ciphertext + tag);
  });

  // 6-7 s each on a quiet machine; past 40 s beside a busy suite: timeouts of their own, not the default 30 s.
  test("node:crypto opens whatever it seals: any key, AAD, length (past a slot's end too) and text", { timeout: 180_000 }, () => {
    const bytesOrText = fc.oneof(
      fc.uint8Array({ maxLength: 1200 }).map((b) => Buffer.from(b)),
      fc.string({ unit: "binary", maxLength: 300 }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 40 }), fc.array(bytesOrText, { minLength: 1, maxLength: 12 }), (key, aad, plaintexts) => {
        const gcm = new BatchedGcm(Buffer.from(key), Buffer.from(aad));
        for (const plaintext of plaintexts) {
          const expected = typeof plaintext === "string" ? Buffer.from(plaintext, "utf8") : plaintext;
          expect(openWithNode(Buffer.from(key), Buffer.from(aad), gcm.seal(plaintext))).toEqual(expected);
        }
      }),
      { numRuns: 100 },
    );
  });

  test("each IV seals one token: a batch is drawn again when its slots are used, whatever the tokens' lengths", { timeout: 180_000 }, () => {
    const ivs = countingIvs();
    const key = randomBytes(32);
    const aad = Buffer.from("key-id", "latin1");
    const gcm = new BatchedGcm(key, aad, ivs.fill);
    const seen = new Set<string>();
    // Lengths change across batches, so the slots' size changes too (short, long, past the longest slot, short again).
    const lengths = [20, 900, 2000, 5, 230];
    for (let i = 0; i < 3 * BATCH_SLOTS + 7; i++) {
      const plaintext = randomBytes(lengths[Math.floor(i / 150) % lengths.length] + (i % 17));
      const sealed = gcm.seal(plaintext);
      seen.add(Buffer.from(sealed, "base64url").subarray(0, 12).toString("hex"));
      expect(openWithNode(key, aad, sealed)).toEqual(plaintext);
    }
    expect(seen.size).toBe(3 * BATCH_SLOTS + 7);
    expect(ivs.draws()).toBe(4);
  });

  test("the same plaintext sealed twice differs, and a bit flipped anywhere does not open", () => {
    const key = randomBytes(32);
    const gcm = new BatchedGcm(key, Buffer.alloc(0));
    const [a, b] = [gcm.seal("the same claims"), gcm.seal("the same claims")];
    expect(a).not.toBe(b);
    const body = Buffer.from(a, "base64url");
    for (let i = 0; i < body.length; i++) {
      const changed = Buffer.from(body);
      changed[i] ^= 1 << (i % 8);
      expect(() => openWithNode(key, Buffer.alloc(0), changed.toString("base64url"))).toThrow();
    }
  });
});

describe("the key ring seals with batched GCM", () => {
  test("the first key seals; after a rotation the new first key does, and every key of the ring opens", () => {
    const [first, second] = [sealKey(randomBytes(32).toString("base64url")), sealKey(randomBytes(32).toString("base64url"))];
    const before = new SealKeyRing([first]);
    const during = new SealKeyRing([second, first]);
    const tokens = Array.from({ length: 300 }, (_, i) => [before.seal(`claims ${i}`), during.seal(`claims ${i}`)]);
    for (const [i, [old, fresh]] of tokens.entries()) {
      expect(old.startsWith(`${first.id}.`)).toBe(true);
      expect(fresh.startsWith(`${second.id}.`)).toBe(true);
      for (const token of [old, fresh]) expect(during.open(token)).toEqual({ ok: true, plaintext: Buffer.from(`claims ${i}`) });
      expect(new SealKeyRing([second]).open(old)).toEqual({ ok: false, problem: "unknown-key" });
    }
  });

  test("the seal with a cipher object of its own (big-endian machines) is the same AES-256-GCM", () => {
    const key = sealKey(randomBytes(32).toString("base64url"));
    const ring = new SealKeyRing([key]);
    const aad = Buffer.from(key.id, "latin1");
    for (const text of ["", "é日本\u{1F600}", "x".repeat(1000)]) {
      expect(ring.open(`${key.id}.${sealOnce(key.key, aad, text)}`)).toEqual({ ok: true, plaintext: Buffer.from(text, "utf8") });
    }
  });
});
