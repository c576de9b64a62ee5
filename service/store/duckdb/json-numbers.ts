/**
 * Numbers written as bytes exactly as DuckDB's `json_object` writes them (its JSON writer,
 * yyjson): report rows formatted in JS (report-rows.ts) are byte for byte the rows DuckDB made
 * before. A double is its shortest round-trip digits, as JS's own `String`, except that a whole
 * number below 1e21 keeps a `.0` and an exponent has no `+` (`1e21`, `2.5e-7`); an integer column
 * is its digits. Checked against DuckDB over thousands of doubles of every magnitude
 * (test/store/json-numbers.test.ts).
 *
 * A metric rounded to d decimals is computed as `floor(x × 10^d + 0.5) / 10^d`: DuckDB hands over
 * N = `floor(x × 10^d + 0.5)` instead, and its text is N's digits with a point d places from the
 * right, trailing zeros dropped. That is the shortest text of the double N / 10^d while N has at
 * most 15 digits (a decimal of at most 15 significant digits is the only one that short to round
 * to its double) and N / 10^d is at least 1e-6 (below, the writer takes an exponent): no digit
 * generation, which measured 2–3× the cost of the integer arithmetic here.
 */

const ZERO = 0x30;
const POINT = 0x2e;

/** Writes a whole number of at most 2^53 in magnitude at `at`; the offset after it. */
export function writeInteger(bytes: Uint8Array, at: number, value: number): number {
  if (value < 0) {
    bytes[at++] = 0x2d;
    value = -value;
  }
  if (value < 10) {
    bytes[at] = ZERO + value;
    return at + 1;
  }
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  const end = at + digits;
  let i = end;
  while (value >= 10) {
    const next = Math.floor(value / 10);
    bytes[--i] = ZERO + (value - next * 10);
    value = next;
  }
  bytes[--i] = ZERO + value;
  return end;
}

/** The text DuckDB's JSON writer gives a double. */
export function doubleText(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return Object.is(value, -0) ? "-0.0" : `${value}.0`;
  const text = String(value);
  return text.includes("e+") ? text.replace("e+", "e") : text;
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
    return writeAscii(bytes, at, doubleText(scaled / 10 ** decimals));
  }
  const unit = POWERS[decimals];
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
  const end = at + digits;
  let i = end;
  for (let k = 0; k < digits; k++) {
    const next = Math.floor(fraction / 10);
    bytes[--i] = ZERO + (fraction - next * 10);
    fraction = next;
  }
  return end;
}
