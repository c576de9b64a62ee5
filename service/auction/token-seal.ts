/**
 * Sealed tokens: authenticated encryption (AES-256-GCM, node:crypto) of a token's bytes under a
 * key ring. Whoever holds a token learns nothing of it and cannot change it; any node holding the
 * ring opens it. The ring's first key seals, every key opens: rotation adds a key behind the first
 * (opened everywhere), then moves it to the front, then drops the old one once its tokens expired.
 *
 * Form: `<key id>.<base64url(iv ‖ ciphertext ‖ tag)>`; the key id (6 characters of the key's
 * SHA-256, nothing secret) picks the key and is authenticated with the payload.
 */
import { createCipheriv, createDecipheriv, createHash, createSecretKey, hkdfSync, randomFillSync, type KeyObject } from "node:crypto";
import { BatchedGcm } from "./batched-gcm.js";
import { LITTLE_ENDIAN } from "./ghash.js";

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const KEY_ID_LENGTH = 6;

/** One key of a ring. */
export interface SealKey {
  /** Public id: the first characters of the key's SHA-256, base64url. */
  id: string;
  key: KeyObject;
}

/** A key from its text: 32 bytes in base64url as is; any other secret stretched to 32 bytes with HKDF-SHA256. */
export function sealKey(secret: string | Buffer): SealKey {
  const text = typeof secret === "string" ? secret.trim() : undefined;
  const raw = text !== undefined && /^[A-Za-z0-9_-]{43}$/.test(text) ? Buffer.from(text, "base64url") : Buffer.from(secret);
  const bytes = raw.length === KEY_BYTES ? raw : Buffer.from(hkdfSync("sha256", raw, Buffer.alloc(0), "adxkit billing token", KEY_BYTES));
  const id = createHash("sha256").update(bytes).digest("base64url").slice(0, KEY_ID_LENGTH);
  return { id, key: createSecretKey(bytes) };
}

/** A fresh random key as the text `sealKey` reads (32 bytes, base64url). */
export function newSealKeyText(): string {
  return randomFillSync(Buffer.alloc(KEY_BYTES)).toString("base64url");
}

/**
 * The same seal with a cipher object of its own (node:crypto), for machines that store 32-bit
 * words high byte first, where batched-gcm.ts's tables do not apply: 10-15 µs a token.
 */
export function sealOnce(key: KeyObject, aad: Buffer, plaintext: Buffer | string): string {
  const iv = randomFillSync(Buffer.alloc(IV_BYTES));
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad);
  const sealed = typeof plaintext === "string" ? cipher.update(plaintext, "utf8") : cipher.update(plaintext);
  return Buffer.concat([iv, sealed, cipher.final(), cipher.getAuthTag()]).toString("base64url");
}

/** The keys that seal (the first) and open (all) tokens. */
export class SealKeyRing {
  readonly keys: readonly SealKey[];
  private readonly byId: ReadonlyMap<string, SealKey>;
  private readonly aad: ReadonlyMap<string, Buffer>;
  /** The first key's sealer, made at the first seal (a ring that only opens needs none). */
  private sealer: BatchedGcm | undefined;

  constructor(keys: readonly SealKey[]) {
    if (keys.length === 0) throw new RangeError("a key ring needs at least one key");
    this.keys = keys;
    this.byId = new Map(keys.map((k) => [k.id, k]));
    this.aad = new Map(keys.map((k) => [k.id, Buffer.from(k.id, "latin1")]));
  }

  /**
   * Seals bytes, or a text as its UTF-8 bytes, with the first key: AES-256-GCM with a random
   * 96-bit IV (no counter to coordinate across nodes sharing a key), the keystream made for 256
   * IVs at a time (batched-gcm.ts: 10-15 µs a token with a cipher object each, 3-5 µs so in a
   * loop; in the exchange, its caches cold, about half of the cipher object's cost).
   */
  seal(plaintext: Buffer | string): string {
    const { id, key } = this.keys[0];
    if (!LITTLE_ENDIAN) return `${id}.${sealOnce(key, this.aad.get(id)!, plaintext)}`;
    this.sealer ??= new BatchedGcm(key, this.aad.get(id)!);
    return `${id}.${this.sealer.seal(plaintext)}`;
  }

  /**
   * Seals, with the first key, what a writer holds from byte 12 to its position, in place
   * (`BatchedGcm.sealWritten`: its buffer must start a memory word; its bytes are spent).
   */
  sealWritten(w: { bytes: Buffer; at: number; room(n: number): void }): string {
    const { id, key } = this.keys[0];
    if (!LITTLE_ENDIAN) return `${id}.${sealOnce(key, this.aad.get(id)!, w.bytes.subarray(IV_BYTES, w.at))}`;
    this.sealer ??= new BatchedGcm(key, this.aad.get(id)!);
    return `${id}.${this.sealer.sealWritten(w)}`;
  }

  /**
   * The bytes a token seals, or why not: `unknown-key` when no key of the ring has its id (a
   * token of a key already dropped, or of another ring), `malformed`, or `forged` when the key
   * is known but the token does not authenticate.
   */
  open(token: string): { ok: true; plaintext: Buffer } | { ok: false; problem: "malformed" | "unknown-key" | "forged" } {
    const dot = token.indexOf(".");
    if (dot !== KEY_ID_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token.slice(dot + 1))) return { ok: false, problem: "malformed" };
    const key = this.byId.get(token.slice(0, dot));
    if (key === undefined) return { ok: false, problem: "unknown-key" };
    const body = Buffer.from(token.slice(dot + 1), "base64url");
    // base64url decoding ignores the unused bits of the last character: a re-spelled token must not open.
    if (body.length < IV_BYTES + TAG_BYTES || body.toString("base64url") !== token.slice(dot + 1)) return { ok: false, problem: "malformed" };
    try {
      const decipher = createDecipheriv("aes-256-gcm", key.key, body.subarray(0, IV_BYTES));
      decipher.setAAD(this.aad.get(key.id)!);
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      const plaintext = Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]);
      return { ok: true, plaintext };
    } catch {
      return { ok: false, problem: "forged" };
    }
  }
}
