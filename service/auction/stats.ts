/** Counters of the exchange, per bidder and per reason, for `stats()` and the logs. */
import type { AuctionRejection } from "@adxkit/bindings";

/** One bidder's counters. `faults` and `rejections` are keyed by auction-rejections ids. */
export interface BidderCounters {
  /** Bid requests sent. */
  requests: number;
  /** Answers that were a bid response (any bids, valid or not). */
  answers: number;
  /** HTTP 204 or an empty 200. */
  noBids: number;
  /** Bids received; valid ones competed. */
  bids: number;
  validBids: number;
  wins: number;
  /** Timeouts not charged to the circuit breaker: the bidder had less than its timeout_ms (or the floor). */
  timeoutsNotCharged: number;
  /** Answers that came after their call's deadline (counted as timeouts) and were read only to keep the connection. */
  lateAnswers: number;
  faults: Partial<Record<AuctionRejection, number>>;
  rejections: Partial<Record<AuctionRejection, number>>;
  /** What lenient mode dropped or normalised in its answers, per rule. */
  lenient: LenientCounts;
}

/** Lenient mode's changes (spec: each rule's and field's lenient policy), by action and rule id. */
export type LenientCounts = Partial<Record<"drop" | "normalise", Record<string, number>>>;

/** Every counter of the exchange. */
export class ExchangeStats {
  auctions = 0;
  invalidRequests = 0;
  /** Auctions answered 200 (some imp won) and 204 (none). */
  answered = 0;
  noBid = 0;
  impsOffered = 0;
  impsWon = 0;
  /** Answers that left the handler after tmax + 10 ms. */
  late = 0;
  /** Auctions answered 204 at once, x-adxkit-no-bid overloaded: no room in the admission rate (unread), or too late to run (overload.ts). */
  overloaded = 0;
  /** Of `overloaded`, those read and found too late to run (shed-below-ms): the rest found no room in the admission rate. */
  overloadedTooLate = 0;
  /** Auctions answered 204 at once: no currency of the request converts to the reports' one (x-adxkit-auction currency). */
  currencyUnsupported = 0;
  /** Billing calls: `refused` are genuine tokens whose impression the report store would not keep (500). */
  billing = { recorded: 0, duplicate: 0, invalid: 0, expired: 0, refused: 0 };
  /** Auctions refused for their caller (auction-auth.ts): 401, 429 and 403. */
  readonly auth = { unauthorized: 0, throttled: 0, forbidden: 0 };
  /** Auctions and billing calls whose spool line could not be written (the counts are kept, not crash-safe). */
  spoolFailures = 0;
  /** What lenient mode dropped or normalised in bid requests, per rule. */
  readonly requestChanges: LenientCounts = {};
  readonly bidders = new Map<string, BidderCounters>();

  bidder(id: string): BidderCounters {
    let counters = this.bidders.get(id);
    if (counters === undefined) {
      counters = { requests: 0, answers: 0, noBids: 0, bids: 0, validBids: 0, wins: 0, timeoutsNotCharged: 0, lateAnswers: 0, faults: {}, rejections: {}, lenient: {} };
      this.bidders.set(id, counters);
    }
    return counters;
  }

  fault(id: string, reason: AuctionRejection): void {
    const faults = this.bidder(id).faults;
    faults[reason] = (faults[reason] ?? 0) + 1;
  }

  rejection(id: string, reason: AuctionRejection): void {
    const rejections = this.bidder(id).rejections;
    rejections[reason] = (rejections[reason] ?? 0) + 1;
  }

  /** Counts each change lenient mode made, by action and rule. */
  lenientChanges(counts: LenientCounts, changes: readonly { rule: string; action: "drop" | "normalise" }[]): void {
    for (const { rule, action } of changes) {
      const byRule = (counts[action] ??= {});
      byRule[rule] = (byRule[rule] ?? 0) + 1;
    }
  }

  /** A plain-JSON snapshot. */
  snapshot() {
    const bidders: Record<string, BidderCounters> = {};
    for (const [id, c] of this.bidders) bidders[id] = { ...c, faults: { ...c.faults }, rejections: { ...c.rejections }, lenient: copyCounts(c.lenient) };
    return {
      auctions: this.auctions,
      invalidRequests: this.invalidRequests,
      answered: this.answered,
      noBid: this.noBid,
      impsOffered: this.impsOffered,
      impsWon: this.impsWon,
      late: this.late,
      overloaded: this.overloaded,
      overloadedTooLate: this.overloadedTooLate,
      currencyUnsupported: this.currencyUnsupported,
      billing: { ...this.billing },
      auth: { ...this.auth },
      spoolFailures: this.spoolFailures,
      requestChanges: copyCounts(this.requestChanges),
      bidders,
    };
  }
}

const copyCounts = (counts: LenientCounts): LenientCounts => Object.fromEntries(Object.entries(counts).map(([action, byRule]) => [action, { ...byRule }]));
