/**
 * Money in integer micro-units (1e-6 of the currency unit). Prices arrive as CPM floats on the
 * wire; the auction converts them once, computes in integers, and converts back only to write
 * the answer, so 1.50 + 0.01 is exactly 1.51 (spec/openapi/bidding.yaml, x-adxkit-auction.money).
 */

/** Micro-units per currency unit. */
export const MICROS_PER_UNIT = 1_000_000;

/** A CPM price from the wire, in integer micro-units (rounded to the nearest micro). */
export function toMicros(cpm: number): number {
  return Math.round(cpm * MICROS_PER_UNIT);
}

/**
 * The JSON number of a micro-unit amount. Integer division by 1e6 is correctly rounded, so the
 * number prints as the exact decimal (1_510_000 → 1.51).
 */
export function fromMicros(micros: number): number {
  return micros / MICROS_PER_UNIT;
}

/**
 * The decimal text of a micro-unit amount, as the `${AUCTION_PRICE}` macro writes it: shortest
 * form, never exponent notation ("1.51", "2", "0.000001").
 */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(Math.round(micros));
  const units = Math.floor(abs / MICROS_PER_UNIT);
  const fraction = String(abs % MICROS_PER_UNIT).padStart(6, "0").replace(/0+$/, "");
  return `${sign}${units}${fraction === "" ? "" : "." + fraction}`;
}

/** The largest CPM whose micro-units are a safe integer (about 9.007 billion). */
export const MAX_SAFE_CPM = Math.floor(Number.MAX_SAFE_INTEGER / MICROS_PER_UNIT);

/**
 * Whether `cpm` may be a price cap: positive, and small enough that every price under it is a
 * safe integer in micro-units, so money stays exact integer arithmetic.
 */
export function isSafeCpm(cpm: unknown): cpm is number {
  return typeof cpm === "number" && cpm > 0 && cpm <= MAX_SAFE_CPM;
}

/** Revenue of one impression priced at a CPM in micro-units, in currency units (CPM / 1000). */
export function impressionRevenue(cpmMicros: number): number {
  return cpmMicros / (MICROS_PER_UNIT * 1000);
}
