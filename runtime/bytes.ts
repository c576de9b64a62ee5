/**
 * Bytes of the fact-key codec's binary form (the generated `writeAuctionKeyBytes` and
 * `readAuctionKeyBytes`) and of the billing token's claims around it: a writer into a buffer
 * that grows, and its reader. A varint is 7 bits a byte, low bits first (any safe integer); a
 * code a varint of at most 2^31 - 1; a text its UTF-8 length as a varint, then its bytes; an
 * hour (`YYYY-MM-DDThh:00:00`) its hours since 1970 as a varint. Plain Uint8Array, TextEncoder
 * and TextDecoder, so it runs wherever the rest of the runtime does; a caller that needs a
 * Buffer (node:crypto) gives the writer its own allocation.
 */
import { hourMillis } from "./hour.js";

const HOUR_MS = 3_600_000;
/** The last hour of year 9999 (what `hourMillis` reads), in hours since 1970. */
const LAST_HOUR = /* @__PURE__ */ Date.UTC(9999, 11, 31, 23) / HOUR_MS;
const INT32_MAX = 2_147_483_647;
const LONE_SURROGATE = /\p{Surrogate}/u;
const encoder = /* @__PURE__ */ new TextEncoder();
// fatal: invalid UTF-8 is refused, not read as U+FFFD; ignoreBOM: a text starting with U+FEFF keeps it.
const decoder = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Bytes a varint of `value` takes. */
function varintLength(value: number): number {
  let n = 1;
  for (let v = value; v >= 128; v = Math.floor(v / 128)) n++;
  return n;
}

const newBytes = (size: number) => new Uint8Array(size);

/**
 * Bytes written into a buffer that grows as needed. Each buffer is a fresh allocation of its own
 * memory, offset 0 by default (so its 32-bit words align, which an in-place cipher over it needs);
 * `allocate` gives another kind (Buffer.allocUnsafeSlow for node:crypto). A write that returns
 * false wrote nothing that counts: the position is then undefined.
 */
export class ByteWriter<B extends Uint8Array = Uint8Array> {
  bytes: B;
  at = 0;
  private lastHourText = "";
  private lastHour = -1;

  constructor(
    size = 512,
    private readonly allocate: (size: number) => B = newBytes as (size: number) => B,
  ) {
    this.bytes = allocate(size);
  }

  /** Room for `n` more bytes after the position (what is before it is kept). */
  room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const bigger = this.allocate(Math.max(2 * this.bytes.length, this.at + n));
    bigger.set(this.bytes.subarray(0, this.at));
    this.bytes = bigger;
  }

  /** A non-negative safe integer; false (nothing written) for anything else. */
  varint(value: unknown): boolean {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) return false;
    this.room(8);
    const bytes = this.bytes;
    let v = value;
    let at = this.at;
    // Division, not shifts: values pass 2^31 (prices in micro-units, expiries in ms).
    while (v >= 128) {
      bytes[at++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    bytes[at++] = v;
    this.at = at;
    return true;
  }

  /** A code: an integer 0 … 2^31 - 1. */
  code(value: unknown): boolean {
    return typeof value === "number" && value <= INT32_MAX && this.varint(value);
  }

  /** A string: its UTF-8 length, then its bytes; false for a value that is not a string or not Unicode text. */
  text(value: unknown): boolean {
    if (typeof value !== "string") return false;
    const n = value.length;
    if (n >= 128) return this.utf8(value);
    if (this.at + 1 + 3 * n > this.bytes.length) this.room(1 + 3 * n);
    const bytes = this.bytes;
    let at = this.at;
    // Identifiers are mostly ASCII and short: one byte a character and one for the length, written
    // here (a native write cost 3x as much at these lengths: 1.2-1.5 against 0.4-0.9 µs a token's texts).
    bytes[at++] = n;
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i);
      if (c >= 128) return this.utf8(value);
      bytes[at++] = c;
    }
    this.at = at;
    return true;
  }

  /** A string of any length and characters, encoded natively. */
  private utf8(value: string): boolean {
    // A lone surrogate has no UTF-8 spelling (it would come back as U+FFFD): not written.
    if (LONE_SURROGATE.test(value)) return false;
    // At most 3 bytes a UTF-16 unit. They are encoded after room for the longest length's varint,
    // and moved back when the length takes fewer bytes (the UTF-8 length is known only then).
    const most = 3 * value.length;
    const room = varintLength(most);
    this.room(8 + room + most);
    const start = this.at + room;
    const { written } = encoder.encodeInto(value, this.bytes.subarray(start, start + most));
    const lengthBytes = varintLength(written);
    if (lengthBytes < room) this.bytes.copyWithin(this.at + lengthBytes, start, start + written);
    this.varint(written);
    this.at += written;
    return true;
  }

  /** An hour `YYYY-MM-DDThh:00:00` as hours since 1970; false for any other value. */
  hour(value: unknown): boolean {
    if (value !== this.lastHourText) {
      const millis = typeof value === "string" ? hourMillis(value) : undefined;
      if (millis === undefined) return false;
      this.lastHourText = value as string;
      this.lastHour = millis / HOUR_MS;
    }
    return this.varint(this.lastHour);
  }
}

/** Reads what ByteWriter wrote, from `at` to `end`; each read gives undefined when the bytes do not hold the value. */
export class ByteReader {
  private lastHour = -1;
  private lastHourText = "";

  constructor(
    readonly bytes: Uint8Array,
    public at: number,
    readonly end: number,
  ) {}

  /** A varint of at most 8 bytes holding a safe integer. */
  varint(): number | undefined {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8 && this.at < this.end; i++) {
      const b = this.bytes[this.at++];
      value += (b & 127) * scale;
      if (b < 128) return Number.isSafeInteger(value) ? value : undefined;
      scale *= 128;
    }
    return undefined;
  }

  /** A code: a varint of at most 2^31 - 1. */
  code(): number | undefined {
    const value = this.varint();
    return value !== undefined && value <= INT32_MAX ? value : undefined;
  }

  /** A string; undefined when cut short or not UTF-8. */
  text(): string | undefined {
    const n = this.varint();
    if (n === undefined || n > this.end - this.at) return undefined;
    const start = this.at;
    this.at += n;
    try {
      return decoder.decode(this.bytes.subarray(start, start + n));
    } catch {
      return undefined;
    }
  }

  /** An hour's text. */
  hour(): string | undefined {
    const h = this.varint();
    if (h === undefined || h > LAST_HOUR) return undefined;
    if (h !== this.lastHour) {
      this.lastHour = h;
      this.lastHourText = new Date(h * HOUR_MS).toISOString().slice(0, 19);
    }
    return this.lastHourText;
  }
}
