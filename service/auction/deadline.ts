/**
 * Time budget of an auction. The request's tmax (default 200 ms; 0 or absent means the
 * default), clamped into [50 ms, 3 s] (x-adxkit-auction min-tmax-ms, max-tmax-ms), is the time
 * the caller allows, counted from when the request reached the exchange.
 * Bidders get tmax minus the exchange's own margin — max(10 ms, 10% of tmax) — to leave time
 * for checking bids, picking winners and writing the answer; the tmax they receive is that
 * budget, and a bidder's timeout_ms can only shorten it. A call still running at its budget
 * is aborted and counts as a timeout (the exchange's fan-out keeps one timer per budget).
 */
import { auctionRules } from "@adxkit/bindings";
/** tmax when the request gives none (x-adxkit-auction.default-tmax-ms). */
export const DEFAULT_TMAX_MS: number = auctionRules.defaultTmaxMs;
/** The smallest exchange margin, in milliseconds. */
export const MIN_MARGIN_MS: number = auctionRules.exchangeMarginMs;
/** The exchange margin as a fraction of tmax, when larger than MIN_MARGIN_MS. */
export const MARGIN_FRACTION: number = auctionRules.exchangeMarginFraction;
/** The shortest and the longest tmax an auction runs with (x-adxkit-auction min-tmax-ms, max-tmax-ms). */
export const MIN_TMAX_MS: number = auctionRules.minTmaxMs;
export const MAX_TMAX_MS: number = auctionRules.maxTmaxMs;
/** An auction whose bidders would get less than this is not run (x-adxkit-auction shed-below-ms, overload.ts). */
export const SHED_BELOW_MS: number = auctionRules.shedBelowMs;
/** A winning bid's markup fetched from its nurl must arrive this long before tmax. */
export const MARKUP_FETCH_SAFETY_MS = 2;

/**
 * The tmax an auction runs with: the request's, or `fallback` when it has none, clamped into
 * [MIN_TMAX_MS, MAX_TMAX_MS]. Unclamped, a huge tmax held bidder connections for minutes (and
 * from 2^31 ms overflowed setTimeout into a 1 ms budget).
 */
export function effectiveTmax(tmax: number | undefined, fallback = DEFAULT_TMAX_MS): number {
  const asked = typeof tmax === "number" && tmax > 0 ? tmax : fallback;
  return Math.min(MAX_TMAX_MS, Math.max(MIN_TMAX_MS, asked));
}

/** The exchange's own share of tmax: max(10 ms, 10% of tmax). */
export function exchangeMargin(tmax: number): number {
  return Math.max(MIN_MARGIN_MS, Math.ceil(tmax * MARGIN_FRACTION));
}

/** Milliseconds left for bidders, given the time already spent; at least 1. */
export function bidderBudget(tmax: number, elapsedMs: number): number {
  return Math.max(1, Math.floor(tmax - exchangeMargin(tmax) - elapsedMs));
}
