/**
 * One auction's state while it runs (AuctionContext: a slot per imp the exchange buys, the bids
 * competing for it, the report counts the auction adds) and what every auction shares
 * (AuctionEnv). `openAuction` takes in a validated request: its slots and their supply counts.
 * `rejectBid` and `bidderFault` count what an auction turned down.
 */
import { auctionRules, type AuctionRejection, type BidRequest, type Imp } from "@adxkit/bindings";
import { demandKey as makeDemandKey, supplyKey as makeSupplyKey } from "@adxkit/bindings/reports";
import { adFormatOf, dateHourOf, requestDimensions, type RequestDimensions } from "../events/dimensions.js";
import type { DemandKey, EventLogger, FactAggregator, FactCounts, FactIncrement, SupplyKey } from "../events/facts.js";
import { impRules, requestRules, type ImpRules, type Rejection, type RequestRules, type TextMarkupBid } from "./bid-checks.js";
import type { BidderConfig } from "./bidders.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import type { CurrencyConverter } from "./currency.js";
import type { MediaKind } from "./markup.js";
import type { NoticeOrigins } from "./notice-origins.js";
import type { BidderCounters, ExchangeStats } from "./stats.js";
import type { SealKeyRing } from "./token-seal.js";

/** What every auction and billing call shares: counters, logger, the report counts, and what is reloaded while serving. */
export interface AuctionEnv {
  readonly counters: ExchangeStats;
  readonly logger: EventLogger;
  /** Requests and bid responses are validated in lenient mode. */
  readonly lenient: boolean;
  readonly facts: FactAggregator;
  /** Wall clock, epoch milliseconds (fact hours, token expiry). */
  readonly clock: () => number;
  /** The rates bids are converted with; swapped by useCurrencyRates. */
  rates: CurrencyConverter;
  /** The keys that seal and open billing tokens; swapped by useBillingKeys. */
  billingKeys: SealKeyRing;
}

/** A configured bidder as the exchange runs it. */
export interface BidderRuntime {
  config: BidderConfig;
  origin: string;
  path: string;
  formats?: ReadonlySet<number>;
  counters: BidderCounters;
  /** Bids above this price (micro-units) are rejected. */
  maxPriceMicros: number;
  /** Where its nurl and burl may point. */
  noticeOrigins: NoticeOrigins;
  breaker?: CircuitBreaker;
  /** A timeout is charged to the breaker only when the call had at least this budget (ms). */
  breakerTimeoutMs: number;
  /** Faults charged so far (bidderFault); tells the breaker whether an answer was a fault. */
  faultCount: number;
  /** Its demand fact keys, reused across auctions. */
  demandFacts: DemandFacts;
}

/** A demand fact key and its aggregate id. */
export interface DemandFact {
  key: DemandKey;
  id: string;
}

/**
 * One bidder's demand fact keys of the current hour, by ad format and platform: made once, not
 * per auction. Each auction then adds counts under the same id string, which the aggregator's
 * maps hash once instead of on every auction.
 */
export class DemandFacts {
  private dateHour = "";
  private readonly byFormat = new Map<number, Map<number, DemandFact>>();

  constructor(
    private readonly bidderId: string,
    private readonly facts: FactAggregator,
  ) {}

  /** The demand fact of this bidder for an imp of `adFormat` on `platform` in `dateHour`. */
  of(dateHour: string, adFormat: number, platform: number): DemandFact {
    if (dateHour !== this.dateHour) {
      // A new hour: the keys of the last one are not needed again (the table stays a few entries).
      this.byFormat.clear();
      this.dateHour = dateHour;
    }
    let byPlatform = this.byFormat.get(adFormat);
    if (byPlatform === undefined) this.byFormat.set(adFormat, (byPlatform = new Map()));
    let fact = byPlatform.get(platform);
    if (fact === undefined) {
      const key = makeDemandKey({ date_hour: dateHour, bidder_id: this.bidderId, ad_format: adFormat, platform });
      byPlatform.set(platform, (fact = { key, id: this.facts.demandId(key) }));
    }
    return fact;
  }
}

/** A valid bid competing for its imp. */
export interface Candidate {
  bidder: BidderRuntime;
  bid: TextMarkupBid;
  seat: string;
  /** The bid's price in the auction's currency, the one bids compete in. */
  priceMicros: number;
  /** The bid's own currency (the answer's cur). */
  currency: string;
  /** The ad type its adm fits (checkBid); undefined without adm. */
  kind?: MediaKind;
  responseBidId?: string;
  /** Order of arrival: ties go to the lowest. */
  seq: number;
}

/** An imp the exchange buys, and the bids competing for it. */
export interface Slot {
  imp: Imp;
  rules: ImpRules;
  adFormat: number;
  placement: string;
  candidates: Candidate[];
  supplyKey: SupplyKey;
  supplyId: string;
  /** Demand fact per bidder id, set when the imp is sent to that bidder. */
  demand: Map<string, DemandFact>;
}

/** An imp's winning bid and its clearing price; `markup` and its `kind` when it came from the win notice. */
export interface Winner {
  slot: Slot;
  candidate: Candidate;
  clearingMicros: number;
  markup?: string;
  kind?: MediaKind;
}

/** One auction's shared state while answers come in. */
export interface AuctionContext {
  request: BidRequest;
  /** The currency the auction runs and answers in (x-adxkit-auction currency). */
  currency: string;
  /** The report counts the auction adds, recorded as one event when it is answered. */
  increments: FactIncrement[];
  slots: Map<string, Slot>;
  rules: RequestRules;
  dims: RequestDimensions;
  dateHour: string;
  seq: number;
}

/** The counts of a request sent (supply: an imp offered; demand: an imp sent to a bidder). */
export const REQUEST: FactCounts = Object.freeze({ request: 1 });
/** The counts of a response (supply: an imp won; demand: a bidder bid on an imp). */
export const RESPONSE: FactCounts = Object.freeze({ response: 1 });

/**
 * The auction's currency: the first of the request's cur (default-currency without one) that the
 * rates convert to the reports' currency and that every floor converts to; undefined when none does.
 */
export function auctionCurrency(request: BidRequest, rates: CurrencyConverter): string | undefined {
  const listed = request.cur !== undefined && request.cur.length > 0 ? request.cur : [auctionRules.defaultCurrency];
  return listed.find(
    (currency) =>
      rates.has(currency, auctionRules.reportCurrency) &&
      request.imp.every((imp) => !(imp.bidfloor !== undefined && imp.bidfloor > 0) || rates.has(imp.bidfloorcur ?? auctionRules.defaultCurrency, currency)),
  );
}

/** The auction of a valid request in `currency`: a slot and a supply request count per imp the exchange buys. */
export function openAuction(env: AuctionEnv, request: BidRequest, currency: string): AuctionContext {
  const dims = requestDimensions(request);
  const dateHour = dateHourOf(env.clock());
  const slots = new Map<string, Slot>();
  const increments: FactIncrement[] = [];
  for (const imp of request.imp) {
    const rules = impRules(imp);
    if (rules.kinds.length === 0) continue;
    // The floor in the auction's currency (auctionCurrency chose one every floor converts to).
    const floorCurrency = imp.bidfloorcur ?? auctionRules.defaultCurrency;
    if (rules.floorMicros > 0 && floorCurrency !== currency) rules.floorMicros = env.rates.convert(rules.floorMicros, floorCurrency, currency) ?? rules.floorMicros;
    const adFormat = adFormatOf(imp);
    const placement = imp.tagid ?? "";
    // supplyKey(): a dimension the model added later holds its default until it is filled here.
    const supplyKey = makeSupplyKey({ date_hour: dateHour, publisher_id: dims.publisher_id, app_bundle_id: dims.app_bundle_id, placement_id: placement, ad_format: adFormat, platform: dims.platform, country: dims.country });
    const supplyId = env.facts.supplyId(supplyKey);
    slots.set(imp.id, { imp, rules, adFormat, placement, candidates: [], supplyKey, supplyId, demand: new Map() });
    env.counters.impsOffered++;
    increments.push({ side: "supply", key: supplyKey, id: supplyId, counts: REQUEST });
  }
  return { request, currency, increments, slots, rules: requestRules(request, env.lenient), dims, dateHour, seq: 0 };
}

/** Counts a bidder's answer as a fault of `reason` (a no-bid for the auction; the circuit breaker learns of it). */
export function bidderFault(env: AuctionEnv, context: AuctionContext, bidder: BidderRuntime, reason: AuctionRejection, detail: string): void {
  env.counters.fault(bidder.config.id, reason);
  bidder.faultCount++;
  // Per auction, so at debug: counted per bidder and reason in stats() and /metrics, summed up each second at info.
  env.logger.debug?.({ auction: context.request.id, bidder: bidder.config.id, reason, detail }, "bidder answer counted as no-bid");
}

/** Counts a bid turned down for `problem`. */
export function rejectBid(env: AuctionEnv, context: AuctionContext, bidder: BidderRuntime, problem: Rejection, bidId: unknown, impId: unknown): void {
  env.counters.rejection(bidder.config.id, problem.reason);
  env.logger.debug?.({ auction: context.request.id, bidder: bidder.config.id, bid: bidId, imp: impId, reason: problem.reason, detail: problem.detail }, "bid rejected");
}

/** A JSON object (not an array, not null): what a bidder's answer, a seatbid and a bid must be. */
export const isObject = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
