/**
 * Numbers written as bytes exactly as DuckDB's `json_object` writes them (its JSON writer,
 * yyjson), into a buffer: report rows formatted in JS (report-rows.ts) are byte for byte the rows
 * DuckDB made before. A double is json-text.ts's `duckdbJsonDouble`; an integer column is its
 * digits. Checked against DuckDB (test/store/json-numbers.test.ts).
 *
 * A metric rounded to d decimals is computed as `floor(x × 10^d + 0.5) / 10^d`: DuckDB hands over
 * N = `floor(x × 10^d + 0.5)` instead, and its text is N's digits with a point d places from the
 * right, trailing zeros dropped. That is the shortest text of the double N / 10^d while N has at
 * most 15 digits (a decimal of at most 15 significant digits is the only one that short to round
 * to its double) and N / 10^d is at least 1e-6 (below, the writer takes an exponent): no digit
 * generation, which measured 2–3× the cost of the integer arithmetic here.
 */

import { duckdbJsonDouble } from "./json-text.js";

const ZERO = 0x30;
const POINT = 0x2e;

/** "00" to "99": two digits per division. */
const PAIRS = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  PAIRS[2 * i] = ZERO + Math.floor(i / 10);
  PAIRS[2 * i + 1] = ZERO + (i % 10);
}

/** How many digits a whole number below 10^16 has. */
function digitCount(value: number): number {
  let digits = 1;
  for (let bound = 10; value >= bound && digits < 16; bound *= 10) digits++;
  return digits;
}

/** Writes the last `digits` digits of a whole number (zero-padded) so that they end at `end`. */
function writeDigits(bytes: Uint8Array, end: number, value: number, digits: number): void {
  let i = end;
  const start = end - digits;
  // Doubles above 2^31, then 32-bit integers: their division is the cheaper one.
  while (value > 0x7fffffff && i - start >= 2) {
    const next = Math.floor(value / 100);
    const pair = (value - next * 100) * 2;
    bytes[--i] = PAIRS[pair + 1];
    bytes[--i] = PAIRS[pair];
    value = next;
  }
  while (i - start >= 2) {
    const next = (value / 100) | 0;
    const pair = (value - next * 100) * 2;
    bytes[--i] = PAIRS[pair + 1];
    bytes[--i] = PAIRS[pair];
    value = next;
  }
  if (i > start) bytes[--i] = ZERO + (value % 10);
}

/**
 * Whole numbers below this are written with 32-bit integer arithmetic, where doubles took a
 * remainder (a call to fmod) and a division per step: writing the 31,000-row report's rows
 * (report-writer.ts) 21.4 / 24.6 / 16.7 / 21.9 / 25.3 → 18.5 / 21.2 / 13.8 / 18.2 / 21.4 ms of CPU
 * (medians of 40, alternating in one process, load 4–6; docs/benchmarks.md, issue 18).
 */
const INT32_BOUND = 0x80000000;

/** Writes a whole number from 0 to 2^31 - 1, its `digits` digits ending at `end`. */
function writeDigits32(bytes: Uint8Array, end: number, value: number, digits: number): void {
  let i = end;
  const start = end - digits;
  while (i - start >= 2) {
    const next = (value / 100) | 0;
    const pair = (value - next * 100) << 1;
    bytes[--i] = PAIRS[pair + 1];
    bytes[--i] = PAIRS[pair];
    value = next;
  }
  if (i > start) bytes[--i] = ZERO + value;
}

/** How many digits a whole number from 0 to 2^31 - 1 has. */
function digitCount32(value: number): number {
  if (value < 100000) return value < 100 ? (value < 10 ? 1 : 2) : value < 1000 ? 3 : value < 10000 ? 4 : 5;
  return value < 10000000 ? (value < 1000000 ? 6 : 7) : value < 100000000 ? 8 : value < 1000000000 ? 9 : 10;
}

/** Writes a whole number of at most 2^53 in magnitude at `at`; the offset after it. */
export function writeInteger(bytes: Uint8Array, at: number, value: number): number {
  if (value >= 0 && value < INT32_BOUND) {
    const digits = digitCount32(value);
    writeDigits32(bytes, at + digits, value | 0, digits);
    return at + digits;
  }
  if (value < 0) {
    bytes[at++] = 0x2d;
    value = -value;
  }
  if (value < 10) {
    bytes[at] = ZERO + value;
    return at + 1;
  }
  if (value >= 1e16) {
    // 17 digits: the first alone.
    const rest = value % 1e16;
    bytes[at++] = ZERO + (value - rest) / 1e16;
    writeDigits(bytes, at + 16, rest, 16);
    return at + 16;
  }
  const digits = digitCount(value);
  writeDigits(bytes, at + digits, value, digits);
  return at + digits;
}

/** Writes an ASCII string at `at`; the offset after it. */
export function writeAscii(bytes: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
  return at;
}

/** The largest N written as digits (15 digits: exactly one double's shortest text). */
const MAX_DIGITS_SCALED = 1e15;
/** 10^d for the decimals written as digits: up to 6, so that N ≥ 1 gives at least 1e-6. */
const POWERS = [1, 10, 100, 1e3, 1e4, 1e5, 1e6];

/**
 * Writes the double N / 10^`decimals` (N = `floor(x × 10^d + 0.5)`, as DuckDB computed it) the way
 * DuckDB's JSON writer writes that double; the offset after it.
 */
export function writeScaled(bytes: Uint8Array, at: number, scaled: number, decimals: number): number {
  if (!(scaled >= 0 && scaled < MAX_DIGITS_SCALED && decimals < POWERS.length)) {
    return writeAscii(bytes, at, duckdbJsonDouble(scaled / 10 ** decimals));
  }
  const unit = POWERS[decimals];
  if (scaled < INT32_BOUND) {
    // The whole part, the point, then all `decimals` digits of the fraction with its trailing zeros dropped.
    const n = scaled | 0;
    const whole = (n / unit) | 0;
    const part = n - whole * unit;
    at = writeInteger(bytes, at, whole);
    bytes[at++] = POINT;
    if (part === 0) {
      bytes[at++] = ZERO;
      return at;
    }
    writeDigits32(bytes, at + decimals, part, decimals);
    at += decimals;
    while (bytes[at - 1] === ZERO) at--;
    return at;
  }
  let fraction = scaled % unit;
  at = writeInteger(bytes, at, (scaled - fraction) / unit);
  bytes[at++] = POINT;
  if (fraction === 0) {
    bytes[at++] = ZERO;
    return at;
  }
  let digits = decimals;
  while (fraction % 10 === 0) {
    fraction /= 10;
    digits--;
  }
  // `digits` places after the point, zero-padded on the left.
  writeDigits(bytes, at + digits, fraction, digits);
  return at + digits;
}
