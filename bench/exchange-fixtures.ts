/**
 * What the auction benches share, so that bench/auction.ts and bench/exchange-work.ts measure
 * against the same bidders: the three reference bidders' settings, and a fact sink that only
 * counts (the store is not what they measure).
 */
import type { BidderOptions } from "../service/bidder/index.js";
import type { Fact, FactSink } from "../service/events/facts.js";

/** Conversion on, as an exchange with a rates file runs (the benches' bids are in USD: the lookups, no arithmetic). */
export const BENCH_RATES = { conversions: { USD: { EUR: 0.9, GBP: 0.8, JPY: 150 } } };

/** Three reference bidders, prices 5–7, 6–8 and 7–9, with a latency when given (bench/auction.ts: 4–6 ms). */
export function benchBidders(latency?: [number, number]): BidderOptions[] {
  return [1, 2, 3].map((n) => ({ id: `bench-${n}`, seat: `seat-${n}`, price: [4 + n, 6 + n] as [number, number], seed: n, ...(latency && { latency }) }));
}

/** A sink that counts the facts handed to it and holds no recovery state. */
export function countingSink(): FactSink & { facts: number } {
  return {
    facts: 0,
    async ingest(batch: Iterable<Fact> | AsyncIterable<Fact>) {
      let n = 0;
      for await (const _ of batch as AsyncIterable<Fact>) n++;
      this.facts += n;
      return n;
    },
    async recoveryState() {
      return { billingTokens: [] };
    },
  };
}
