/**
 * The exchange's two operations (spec/openapi/bidding.yaml): `auction` fans a bid request out
 * to the eligible bidders, checks every bid, runs one auction per imp and answers the winners;
 * `billingEvent` verifies the token of the exchange's own burl, records the impression once and
 * calls the bidder's burl. Reports are fed through the fact aggregator, notices through the
 * notice sender; neither is awaited on the hot path.
 */
import { performance } from "node:perf_hooks";
import { auctionRejectionOfRule, auctionRules, validateBidResponse, type AuctionRejection, type Bid, type BidRequest, type BidResponse, type Imp, type Normalisation, type SeatBid, type ValidationResult } from "@adxkit/bindings";
import type { OperationInput, OperationOutput } from "@adxkit/bindings/fastify";
import { adFormatOf, adFormatsOffered, dateHourOf, requestDimensions, type RequestDimensions } from "../events/dimensions.js";
import { FactAggregator, SpoolVersionError, storeRefusal, type DemandKey, type EventLogger, type FactCounts, type FactIncrement, type FactSink, type SupplyKey } from "../events/facts.js";
import { parsePosition, Spool } from "../events/spool.js";
import { demandKey as makeDemandKey, demandKeyOf, encodeAuctionKey, supplyKey as makeSupplyKey, supplyKeyOf } from "@adxkit/bindings/reports";
import { newTokenId, openBillingToken, sealBillingToken, type BillingClaims } from "./billing-token.js";
import { checkBid, describe, impRules, requestRules, type ImpRules, type Rejection, type RequestRules, type TextMarkupBid } from "./bid-checks.js";
import type { BidderConfig } from "./bidders.js";
import { CircuitBreaker, type CircuitBreakerOptions, type CircuitSnapshot } from "./circuit-breaker.js";
import { clearingPrice } from "./clearing.js";
import { CurrencyConverter } from "./currency.js";
import { bidderBudget, DEFAULT_TMAX_MS, effectiveTmax, MARKUP_FETCH_SAFETY_MS, SHED_BELOW_MS, SHED_LAG_MS, SHED_MIN_RUNNING } from "./deadline.js";
import { LoopLagProbe, type LagProbeOptions } from "./overload.js";
import { HttpClient, type BidCall, type CallOutcome } from "./http-client.js";
import { replaceMacros, type MacroValues } from "./macros.js";
import { markupFits, markupKind } from "./markup.js";
import { formatMicros, fromMicros, isSafeCpm, MAX_SAFE_CPM, toMicros } from "./money.js";
import { NoticeSender, type NoticeOptions } from "./notices.js";
import { AuctionKeys, type AuctionAccount, type AuctionKeySource, type AuctionKeysOptions } from "../accounts/auction-keys.js";
import { createAuthThrottle, type AuthThrottle } from "../accounts/throttle.js";
import { AuctionGate, type Admission } from "./auction-auth.js";
import { NoticeOrigins } from "./notice-origins.js";
import { NoticeThread } from "./notice-thread.js";
import { ExchangeStats, type BidderCounters } from "./stats.js";
import { forwardedBody } from "./forward.js";
import type { SealKeyRing } from "./token-seal.js";
import { ruleRefusal } from "../rule-refusal.js";

/** Options of the exchange (registerExchange). */
export interface ExchangeOptions {
  bidders: BidderConfig[];
  /** Where the report facts go (the report store). */
  sink: FactSink;
  /** Validate requests and bid responses in lenient mode (spec/errors.yaml: each rule's lenient treatment). */
  lenient?: boolean;
  /** The keys that seal and open billing tokens (billing-keys.ts); `useBillingKeys` swaps them. */
  billingKeys: SealKeyRing;
  /** The exchange's public base URL; its burl is `${publicUrl}/events/billing?token=…`. */
  publicUrl: string;
  logger?: EventLogger;
  /** Wall clock, epoch milliseconds (fact hours, token expiry); Date.now by default. */
  clock?: () => number;
  /** Lifetime of a billing token (default the spec's billing-token-ttl-ms, 1 hour; the ClickHouse settler counts on it). */
  billingTtlMs?: number;
  /** Period of the fact flush (default the spec's flush-ms, 1000 ms). */
  flushMs?: number;
  /** tmax when the request has none (default 200 ms). */
  defaultTmaxMs?: number;
  /**
   * Highest bid price taken, CPM (default x-adxkit-auction max-bid-cpm); a bidder's `max_cpm`
   * in the bidders file overrides it. Above it a bid is rejected (price-above-max).
   */
  maxBidCpm?: number;
  /**
   * The rates bids are converted with (x-adxkit-auction currency); without them the exchange
   * trades in the reports' currency (USD) only. `useCurrencyRates` swaps them while serving.
   */
  currencyRates?: CurrencyConverter;
  /** Largest bidder answer read (default 1 MiB). */
  maxBodyBytes?: number;
  /** Connections per bidder origin (default 128). */
  connectionsPerBidder?: number;
  notices?: NoticeOptions;
  /**
   * Send win and billing notices from a worker thread (notice-thread.ts), off the event loop
   * that answers auctions. Off when absent; `adxkit serve` (startServer) turns it on.
   */
  noticeThread?: boolean;
  /**
   * Shed load instead of answering late (x-adxkit-auction overload, overload.ts): a request that
   * arrives while the event loop is more than shed-lag-ms behind is answered 204 before its body
   * is read (`shedUnread`); the loop's lag counts as spent time, and an auction left with less
   * than shed-below-ms for its bidders is answered 204 at once; both counted overloaded. Off when
   * absent; `adxkit serve` (startServer) turns it on. Tests pass the probe's clock.
   */
  loadShedding?: boolean | LagProbeOptions;
  /** How long close() waits for notices in flight (default 1000 ms). */
  closeGraceMs?: number;
  /**
   * Per-bidder circuit breaker: `{}` opens after 10 consecutive faults and probes after 5 s
   * (circuit-breaker.ts). Off when absent or false; `adxkit serve` (startServer) turns it on.
   */
  circuitBreaker?: CircuitBreakerOptions | false;
  /**
   * Folder of the write-ahead spool (service/events/spool.ts): auctions and billing calls are
   * appended to it before they are answered, and `recover()` replays it after a crash. Without
   * it, up to a flush period of counts is lost when the process dies. The sink must then offer
   * `recoveryState`.
   */
  spoolDir?: string;
  /** The database the spool's counts belong to; a spool folder of another database is refused (SpoolOptions.database). */
  spoolDatabase?: string;
  /**
   * Told each bidder call's outcome and how long it took since the fan-out (the bidder latency
   * histogram of /metrics, service/ops/metrics.ts). Nothing is measured when absent.
   */
  onBidderCall?: (bidderId: string, ms: number, outcome: CallOutcome["kind"]) => void;
  /**
   * Where the supply accounts' auction keys come from (the report store): every auction must
   * carry one (auction-auth.ts). Required unless `openAuction`.
   */
  auctionKeys?: AuctionKeySource;
  /** How the key table refreshes (accounts/auction-keys.ts; tests shorten it). */
  auctionKeysOptions?: AuctionKeysOptions;
  /** Anyone may run auctions, for any publisher (the demo, tests): no key, no publisher check. */
  openAuction?: boolean;
  /** The credential throttle the auction keys go through (startServer shares the reports'); a new one when absent. */
  authThrottle?: AuthThrottle;
}

interface BidderRuntime {
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
}

interface Candidate {
  bidder: BidderRuntime;
  bid: TextMarkupBid;
  seat: string;
  /** The bid's price in the auction's currency, the one bids compete in. */
  priceMicros: number;
  /** The bid's own currency (the answer's cur). */
  currency: string;
  responseBidId?: string;
  /** Order of arrival: ties go to the lowest. */
  seq: number;
}

interface Slot {
  imp: Imp;
  rules: ImpRules;
  adFormat: number;
  placement: string;
  candidates: Candidate[];
  supplyKey: SupplyKey;
  supplyId: string;
  /** Demand fact key and id per bidder id, made when the imp is sent to that bidder. */
  demand: Map<string, { key: DemandKey; id: string }>;
}

interface Winner {
  slot: Slot;
  candidate: Candidate;
  clearingMicros: number;
  markup?: string;
}

/** One auction's shared state while answers come in. */
interface AuctionContext {
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

const REQUEST: FactCounts = Object.freeze({ request: 1 });
/** The 204 of an auction not run for want of a currency it can trade in (x-adxkit-auction currency). */
const NO_CURRENCY_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "x-adxkit-no-bid": "currency-unsupported" });
/** The 204 of an auction not run (spec: the auction's 204, header x-adxkit-no-bid). */
const SHED_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "x-adxkit-no-bid": "overloaded" });
const RESPONSE: FactCounts = Object.freeze({ response: 1 });
const noop = () => {};
/** Resolves at the end of this event-loop turn: one setImmediate shared by every auction answering in the turn. */
let turnEnd: Promise<void> | undefined;
const endOfTurn = () =>
  (turnEnd ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      turnEnd = undefined;
      resolve();
    }),
  ));
const silent: EventLogger = { info: noop, warn: noop, error: noop };
const isObject = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
/** A path into a bid; group 3 when it points inside the bid's markup (the native response's own issues). */
const bidPath = /^\/seatbid\/(\d+)\/bid\/(\d+)(?:(\/adm\/)|\/|$)/;
const seatPath = /^\/seatbid\/(\d+)(?:\/|$)/;

/** Bidder answers are validated without the recommended fields (most real answers lack some). */
const STRICT_ANSWER = Object.freeze({ lenient: false, recommended: false });
const LENIENT_ANSWER = Object.freeze({ lenient: true, recommended: false });

/** The bids of a response inside the part at `path` (a bid or a seatbid). */
function bidsAt(response: Record<string, any>, path: string): any[] {
  const seats: unknown[] = Array.isArray(response.seatbid) ? response.seatbid : [];
  const seatBids = (seat: unknown): unknown[] => (isObject(seat) && Array.isArray(seat.bid) ? seat.bid : []);
  const [, field, s, , b] = path.split("/");
  if (field !== "seatbid" || s === undefined) return [];
  const bids = seatBids(seats[Number(s)]);
  return b === undefined ? bids : bids.slice(Number(b), Number(b) + 1);
}

/** Why a bid's nurl or burl may not be called (notice-origins.ts), as a rejection; undefined when both may. */
function noticeRefusal(bid: Bid, origins: NoticeOrigins): Rejection | undefined {
  const why = (bid.nurl !== undefined ? origins.refusal(bid.nurl) : undefined) ?? (bid.burl !== undefined ? origins.refusal(bid.burl) : undefined);
  return why === undefined ? undefined : { reason: "notice-url-not-allowed", detail: why };
}

/** The exchange: state shared by all auctions (pools, notices, facts, seen billing tokens). */
export class Exchange {
  private readonly bidders: BidderRuntime[];
  private readonly http: HttpClient;
  /** This thread's sender: markup fetches, and the notices when there is no notice thread. */
  private readonly notices: NoticeSender;
  /** Where win and billing notices go: the notice thread when there is one. */
  private readonly noticeQueue: NoticeSender | NoticeThread;
  private readonly facts: FactAggregator;
  private readonly spool: Spool | undefined;
  private readonly logger: EventLogger;
  private readonly clock: () => number;
  private readonly lenient: boolean;
  private readonly publicUrl: string;
  private readonly billingTtlMs: number;
  private billingKeys: SealKeyRing;
  private rates: CurrencyConverter;
  private readonly defaultTmaxMs: number;
  private readonly counters = new ExchangeStats();
  /**
   * Billing token ids this node recorded, with their expiry (epoch ms); swept once a minute. What
   * makes a token count once on DuckDB; on a store shared by nodes that `countsBilledOnce`, only
   * a fast path (a repeat to another node is written again and collapses in the store).
   */
  private readonly seenTokens = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  private closing: Promise<void> | undefined;
  /** The supply accounts' auction keys; undefined for an open auction. */
  private readonly auctionKeys: AuctionKeys | undefined;
  private readonly gate: AuctionGate | undefined;
  /** The event loop's lag, with load shedding on (overload.ts). */
  private readonly lag: LoopLagProbe | undefined;
  /** Auctions between their handler's start and their answer. */
  private running = 0;

  constructor(private readonly options: ExchangeOptions) {
    this.logger = options.logger ?? silent;
    this.clock = options.clock ?? Date.now;
    this.lenient = options.lenient === true;
    this.publicUrl = options.publicUrl.replace(/\/+$/, "");
    this.billingTtlMs = options.billingTtlMs ?? auctionRules.billingTokenTtlMs;
    this.billingKeys = options.billingKeys;
    this.rates = options.currencyRates ?? new CurrencyConverter();
    this.defaultTmaxMs = options.defaultTmaxMs ?? DEFAULT_TMAX_MS;
    if (options.openAuction !== true && options.auctionKeys === undefined) throw new TypeError("an exchange needs auctionKeys (the report store) to check its callers, or openAuction: true");
    if (options.openAuction !== true) {
      this.auctionKeys = new AuctionKeys(options.auctionKeys!, { onError: (err) => this.logger.error({ err }, "auction keys could not be reloaded; the previous ones stay in use"), ...options.auctionKeysOptions });
      this.gate = new AuctionGate(this.auctionKeys, options.authThrottle ?? createAuthThrottle(), this.counters.auth);
    }
    const maxBidCpm = options.maxBidCpm ?? auctionRules.maxBidCpm;
    if (!isSafeCpm(maxBidCpm)) throw new RangeError(`maxBidCpm must be a positive CPM of at most ${MAX_SAFE_CPM} (got ${maxBidCpm})`);
    const noticeOrigins = new Map(options.bidders.map((config) => [config.id, new NoticeOrigins(config)]));
    for (const [bidder, origins] of noticeOrigins) {
      for (const { origin, reason } of origins.refused) this.logger.warn({ bidder, origin, reason }, "notices to this origin will be refused");
    }
    const privateHosts = [...noticeOrigins.values()].flatMap((origins) => origins.privateHosts);
    this.http = new HttpClient({
      connections: options.connectionsPerBidder,
      maxBodyBytes: options.maxBodyBytes,
      noticeConnections: options.notices?.connections,
      noticePipelining: options.notices?.pipelining,
      privateHosts,
    });
    this.notices = new NoticeSender(this.http, this.logger, options.notices);
    this.noticeQueue = options.noticeThread ? new NoticeThread(this.notices, this.logger, options.notices ?? {}, options.maxBodyBytes, privateHosts) : this.notices;
    this.spool = options.spoolDir !== undefined ? Spool.open(options.spoolDir, { database: options.spoolDatabase }) : undefined;
    this.facts = new FactAggregator({ sink: options.sink, flushMs: options.flushMs, logger: this.logger, spool: this.spool });
    this.bidders = options.bidders.map((config) => {
      const url = new URL(config.endpoint);
      return {
        config,
        origin: url.origin,
        path: url.pathname + url.search,
        formats: config.formats ? new Set(config.formats) : undefined,
        counters: this.counters.bidder(config.id),
        maxPriceMicros: toMicros(config.max_cpm ?? maxBidCpm),
        noticeOrigins: noticeOrigins.get(config.id)!,
        breaker: options.circuitBreaker ? new CircuitBreaker(options.circuitBreaker) : undefined,
        breakerTimeoutMs: config.timeout_ms ?? (options.circuitBreaker ? options.circuitBreaker.timeoutFloorMs : undefined) ?? auctionRules.breakerTimeoutFloorMs,
        faultCount: 0,
      };
    });
    this.sweeper = setInterval(() => this.sweepTokens(), 60_000);
    this.sweeper.unref();
    const shedding = options.loadShedding;
    this.lag = shedding ? new LoopLagProbe(shedding === true ? {} : shedding) : undefined;
  }

  /**
   * When the request the exchange sees now arrived (performance.now() scale): now, less the
   * event loop's lag when load shedding is on (what it waited unseen, overload.ts).
   */
  arrivedAt(): number {
    return performance.now() - (this.lag?.waitedMs() ?? 0);
  }

  /**
   * With load shedding, the answer to an auction request that arrives while the event loop is
   * more than shed-lag-ms behind and at least shed-min-running auctions run: 204 at once, before
   * its body is read (so it counts in no report, only as overloaded). Undefined when the request
   * may be read. With fewer auctions running, a loop that far behind is a stall of the machine
   * (a collection, another process), not this exchange's load: shedding would gain nothing.
   */
  shedUnread(): OperationOutput | undefined {
    if (this.lag === undefined || this.running < SHED_MIN_RUNNING || this.lag.behindMs() <= SHED_LAG_MS) return undefined;
    this.counters.auctions++;
    this.counters.overloaded++;
    this.counters.noBid++;
    return { status: 204, headers: SHED_HEADERS };
  }

  /** How late the bidders' timers will fire, counted as spent (0 without load shedding). */
  private timerSlipMs(): number {
    return this.lag?.waitedMs() ?? 0;
  }

  /** Loads the auction keys (before the first auction; nothing to do for an open auction). */
  async loadAuctionKeys(): Promise<void> {
    await this.auctionKeys?.reload();
  }

  /**
   * Whether a caller may run auctions: its `Authorization` header against the auction keys,
   * through the throttle (auction-auth.ts). Undefined for an open auction (anyone may).
   */
  admit(authorization: string | undefined, address: string): Promise<Admission> | undefined {
    return this.gate?.admit(authorization, address);
  }

  /**
   * POST /openrtb2/auction. `startedAt` is performance.now() when the request arrived;
   * `account` the caller's, from `admit` (not needed for an open auction).
   */
  async auction(input: OperationInput<BidRequest>, startedAt = performance.now(), account?: AuctionAccount): Promise<OperationOutput> {
    this.running++;
    try {
      return await this.runAuction(input, startedAt, account);
    } finally {
      this.running--;
    }
  }

  private async runAuction(input: OperationInput<BidRequest>, startedAt: number, account: AuctionAccount | undefined): Promise<OperationOutput> {
    this.counters.auctions++;
    if (this.gate !== undefined && account === undefined) {
      this.counters.auth.unauthorized++;
      return ruleRefusal("auction-key-invalid", "an auction key is required");
    }
    if (!input.validation.valid) {
      this.counters.invalidRequests++;
      return { status: 400, body: { errors: input.validation.errors, warnings: input.validation.warnings } };
    }
    // Lenient mode: the request as the validator repaired it (parts dropped, values normalised), counted per rule.
    const request = (input.validation.payload ?? input.payload) as BidRequest;
    if (input.validation.normalisations !== undefined) this.counters.lenientChanges(this.counters.requestChanges, input.validation.normalisations);
    const forbidden = account !== undefined ? this.gate!.publisherRefusal(request, account) : undefined;
    if (forbidden !== undefined) return forbidden;
    const tmax = effectiveTmax(request.tmax, this.defaultTmaxMs);
    const currency = this.auctionCurrency(request);
    const context = this.openAuction(request, currency ?? auctionRules.reportCurrency);
    if (context.slots.size === 0) {
      // Nothing this exchange buys (an audio-only request, rule imp-media-supported): no bidder is called.
      this.counters.noBid++;
      return { status: 204 };
    }

    let output: OperationOutput;
    if (currency === undefined) {
      // No currency of the request converts to the reports' one: no bidder is called; the request still counts.
      this.counters.currencyUnsupported++;
      output = { status: 204, headers: NO_CURRENCY_HEADERS };
    } else if (bidderBudget(tmax, performance.now() - startedAt + this.timerSlipMs()) < SHED_BELOW_MS) {
      // Too late to run (the request waited unseen, overload.ts): answered at once, counted.
      this.counters.overloaded++;
      output = { status: 204, headers: SHED_HEADERS };
    } else {
      await this.fanOut(context, tmax, startedAt);
      const winners = this.pickWinners(context);
      await this.fetchMissingMarkup(context, winners, startedAt + tmax - MARKUP_FETCH_SAFETY_MS);
      output = this.answer(context, winners);
    }
    try {
      // Answers leave at the end of the event-loop turn: with a spool after its group commit (one
      // write for the turn), without one right after the I/O poll. Auctions decided in the same
      // poll answer together; on a busy machine that costs no latency worth counting and saves
      // every process on the path CPU per auction (bench/auction.ts measures both).
      const recorded = this.facts.record(context.increments);
      await (this.spool !== undefined ? recorded : endOfTurn());
    } catch (error) {
      // The counts are aggregated and reach the store at the next flush; only a crash before it would lose them.
      this.counters.spoolFailures++;
      this.logger.error({ err: error, auction: request.id }, "spool write failed; the auction's counts are not crash-safe");
    }

    if (output.status === 204) this.counters.noBid++;
    else this.counters.answered++;
    if (performance.now() - startedAt > tmax + 10) this.counters.late++;
    return output;
  }

  /**
   * The auction's currency: the first of the request's cur (default-currency without one) that the
   * rates convert to the reports' currency and that every floor converts to; undefined when none does.
   */
  private auctionCurrency(request: BidRequest): string | undefined {
    const listed = request.cur !== undefined && request.cur.length > 0 ? request.cur : [auctionRules.defaultCurrency];
    const rates = this.rates;
    return listed.find(
      (currency) =>
        rates.has(currency, auctionRules.reportCurrency) &&
        request.imp.every((imp) => !(imp.bidfloor !== undefined && imp.bidfloor > 0) || rates.has(imp.bidfloorcur ?? auctionRules.defaultCurrency, currency)),
    );
  }

  /** Uses new currency rates from the next auction on (adxkit serve re-reads its rates file on SIGHUP). */
  useCurrencyRates(rates: CurrencyConverter): void {
    this.rates = rates;
  }

  private openAuction(request: BidRequest, currency: string): AuctionContext {
    const dims = requestDimensions(request);
    const dateHour = dateHourOf(this.clock());
    const slots = new Map<string, Slot>();
    const increments: FactIncrement[] = [];
    for (const imp of request.imp) {
      const rules = impRules(imp);
      if (rules.kinds.length === 0) continue;
      // The floor in the auction's currency (auctionCurrency chose one every floor converts to).
      const floorCurrency = imp.bidfloorcur ?? auctionRules.defaultCurrency;
      if (rules.floorMicros > 0 && floorCurrency !== currency) rules.floorMicros = this.rates.convert(rules.floorMicros, floorCurrency, currency) ?? rules.floorMicros;
      const adFormat = adFormatOf(imp);
      const placement = imp.tagid ?? "";
      // supplyKey(): a dimension the model added later holds its default until it is filled here.
      const supplyKey = makeSupplyKey({ date_hour: dateHour, publisher_id: dims.publisher_id, app_bundle_id: dims.app_bundle_id, placement_id: placement, ad_format: adFormat, platform: dims.platform, country: dims.country });
      const supplyId = this.facts.supplyId(supplyKey);
      slots.set(imp.id, { imp, rules, adFormat, placement, candidates: [], supplyKey, supplyId, demand: new Map() });
      this.counters.impsOffered++;
      increments.push({ side: "supply", key: supplyKey, id: supplyId, counts: REQUEST });
    }
    return { request, currency, increments, slots, rules: requestRules(request, this.lenient), dims, dateHour, seq: 0 };
  }

  /**
   * Sends the request to every eligible bidder in parallel; resolves when each has answered or
   * run out of time. Answers are checked as they arrive; one timer per distinct budget expires
   * the calls still running.
   */
  private fanOut(context: AuctionContext, tmax: number, startedAt: number): Promise<void> {
    const { request } = context;
    // The imps the exchange buys (imps offering only audio are left out).
    const offered = context.slots.size === request.imp.length ? request.imp : [...context.slots.values()].map((slot) => slot.imp);
    const sentAt = performance.now();
    // Their timers will fire as late as the loop runs now: that slip is spent too.
    const budget = bidderBudget(tmax, sentAt - startedAt + this.timerSlipMs());
    const onBidderCall = this.options.onBidderCall;
    const bodies = new Map<string, { sent: BidRequest; body: Buffer }>();
    const calls = new Map<number, BidCall[]>();
    return new Promise<void>((resolve) => {
      // One count for the loop itself, so that an answer reported synchronously cannot finish early.
      let pending = 1;
      const timers: NodeJS.Timeout[] = [];
      const settle = () => {
        if (--pending > 0) return;
        for (const timer of timers) clearTimeout(timer);
        resolve();
      };
      for (const bidder of this.bidders) {
        const imps = bidder.formats ? offered.filter((imp) => adFormatsOffered(imp).some((f) => bidder.formats!.has(f))) : offered;
        if (imps.length === 0) continue;
        // An open circuit skips the bidder (counted in stats().circuits), half-open lets one probe through.
        if (bidder.breaker !== undefined && !bidder.breaker.allow()) continue;
        const ms = bidder.config.timeout_ms !== undefined ? Math.min(budget, bidder.config.timeout_ms) : budget;
        const all = imps.length === request.imp.length;
        // Bidders sent the same imps with the same budget share one body; `sent` is what their
        // answers are checked against (the cross-checks read id, imp and cur, not tmax).
        const bodyKey = `${all ? "*" : imps.map((imp) => imp.id).join("\u0000")}|${ms}`;
        let shared = bodies.get(bodyKey);
        if (shared === undefined) {
          const sent: BidRequest = all ? request : { ...request, imp: imps as BidRequest["imp"] };
          // Encoded once: undici would otherwise encode a string body again for every bidder.
          shared = { sent, body: Buffer.from(forwardedBody(request, all ? undefined : imps, ms)) };
          bodies.set(bodyKey, shared);
        }
        const { sent, body } = shared;
        bidder.counters.requests++;
        for (const imp of imps) {
          const slot = context.slots.get(imp.id)!;
          const key = makeDemandKey({ date_hour: context.dateHour, bidder_id: bidder.config.id, ad_format: slot.adFormat, platform: context.dims.platform });
          const demand = { key, id: this.facts.demandId(key) };
          slot.demand.set(bidder.config.id, demand);
          context.increments.push({ side: "demand", key, id: demand.id, counts: REQUEST });
        }
        pending++;
        const call = this.http.postBidRequest(bidder.origin, bidder.path, body, (outcome) => {
          onBidderCall?.(bidder.config.id, performance.now() - sentAt, outcome.kind);
          this.answerArrived(context, bidder, sent, outcome, ms);
          settle();
        });
        let group = calls.get(ms);
        if (group === undefined) calls.set(ms, (group = []));
        group.push(call);
      }
      for (const [ms, group] of calls) {
        const detail = `no complete answer within ${ms} ms`;
        timers.push(setTimeout(() => group.forEach((call) => call.expire(detail)), ms));
      }
      settle();
    });
  }

  /**
   * One bidder's outcome: its bids join the auction, and the circuit breaker learns whether it
   * was a fault. `budgetMs` is the time the bidder had: the caller sets it through tmax, so a
   * timeout within less than the bidder needs (its timeout_ms, else the floor) is not the
   * bidder's fault and is not charged (else twelve auctions with tmax 1 switched every bidder off).
   */
  private answerArrived(context: AuctionContext, bidder: BidderRuntime, sent: BidRequest, outcome: CallOutcome, budgetMs: number): void {
    const faultsBefore = bidder.faultCount;
    try {
      this.takeAnswer(context, bidder, sent, outcome);
      if (bidder.faultCount === faultsBefore) bidder.breaker?.success();
      else if (outcome.kind === "fault" && outcome.reason === "timeout" && budgetMs < bidder.breakerTimeoutMs) {
        bidder.counters.timeoutsNotCharged++;
        bidder.breaker?.inconclusive();
      } else bidder.breaker?.failure();
    } catch (error) {
      // A bug while checking one answer costs that answer, never the auction.
      this.logger.error({ err: error, auction: context.request.id, bidder: bidder.config.id }, "checking a bidder answer failed");
      this.counters.rejection(bidder.config.id, "invalid-response");
    }
  }

  /** Checks one bidder's answer as it arrives; valid bids join their imp's candidates. */
  private takeAnswer(context: AuctionContext, bidder: BidderRuntime, sent: BidRequest, outcome: CallOutcome): void {
    const id = bidder.config.id;
    if (outcome.kind === "fault") return this.bidderFault(context, bidder, outcome.reason, outcome.detail);
    if (outcome.kind === "no-bid") {
      bidder.counters.noBids++;
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(outcome.text);
    } catch (error) {
      return this.bidderFault(context, bidder, "malformed-response", `body is not JSON: ${(error as Error).message}`);
    }
    if (!isObject(parsed)) return this.bidderFault(context, bidder, "malformed-response", "body is not a JSON object");
    let response: Record<string, any> = parsed;
    let validation: ValidationResult | undefined;
    if (this.lenient) {
      // The answer as the validator repaired it (another id, an empty seatbid, cur ""): the exchange acts on that one answer.
      validation = validateBidResponse(response, sent, LENIENT_ANSWER);
      if (validation.normalisations !== undefined) {
        this.lenientChanges(context, bidder, response, validation.normalisations);
        response = validation.payload as Record<string, any>;
        // What is left to reject is located in the repaired answer, whose bids may have moved.
        if (!validation.valid) validation = validateBidResponse(response, sent, LENIENT_ANSWER);
      }
    }
    if (response.id !== sent.id) {
      return this.bidderFault(context, bidder, "wrong-request-id", `response id ${JSON.stringify(response.id)} is not the request id ${JSON.stringify(sent.id)}`);
    }
    bidder.counters.answers++;
    if (response.seatbid === undefined || (Array.isArray(response.seatbid) && response.seatbid.length === 0)) {
      bidder.counters.noBids++;
      return;
    }

    // Validation problems are attributed to the bid, seat or response their path points into.
    validation ??= validateBidResponse(response, sent, STRICT_ANSWER);
    const currency = typeof response.cur === "string" ? response.cur : auctionRules.defaultCurrency;
    // A bid in a currency the request does not list still competes when the rates convert it (Prebid Server's way).
    const convertible = this.rates.has(currency, context.currency) && this.rates.has(currency, auctionRules.reportCurrency);
    let responseProblem: Rejection | undefined;
    const seatProblems = new Map<string, Rejection>();
    const bidProblems = new Map<string, Rejection>();
    for (const error of validation.errors) {
      if (error.rule === "response-cur-allowed" && convertible) continue;
      const detail = `${error.path || "/"}: ${error.message} [${error.rule}]`;
      // The reason the spec gives the rule (auction-rejections rules); a problem inside the markup is a mismatch.
      const inBid = bidPath.exec(error.path);
      const reason: AuctionRejection = inBid?.[3] !== undefined ? "markup-mismatch" : (auctionRejectionOfRule[error.rule] ?? "invalid-response");
      const inSeat = inBid ? undefined : seatPath.exec(error.path);
      if (inBid) {
        const key = `${inBid[1]}/${inBid[2]}`;
        if (!bidProblems.has(key)) bidProblems.set(key, { reason, detail });
      } else if (inSeat) {
        if (!seatProblems.has(inSeat[1])) seatProblems.set(inSeat[1], { reason: "invalid-response", detail });
      } else if (reason !== "invalid-response") {
        responseProblem ??= { reason, detail };
      } else if (responseProblem?.reason !== "invalid-response") {
        responseProblem = { reason: "invalid-response", detail };
      }
    }

    const responseBidId = typeof response.bidid === "string" ? response.bidid : undefined;
    const seatbids: unknown[] = Array.isArray(response.seatbid) ? response.seatbid : [];
    const answeredImps = new Set<string>();
    let bidsSeen = 0;
    seatbids.forEach((seat, s) => {
      if (!isObject(seat) || !Array.isArray(seat.bid)) return;
      const seatId = typeof seat.seat === "string" ? seat.seat : bidder.config.seat;
      seat.bid.forEach((bid: unknown, b: number) => {
        bidsSeen++;
        bidder.counters.bids++;
        let problem = responseProblem ?? seatProblems.get(String(s)) ?? bidProblems.get(`${s}/${b}`);
        if (problem === undefined && !isObject(bid)) problem = { reason: "invalid-response", detail: "bid is not an object" };
        const valid = bid as Bid;
        const slot = problem === undefined ? context.slots.get(valid.impid) : undefined;
        if (problem === undefined && slot === undefined) problem = { reason: "unknown-imp", detail: `impid ${JSON.stringify(valid.impid)} names no imp` };
        const bidMicros = problem === undefined ? toMicros(valid.price) : 0;
        // Compared in the auction's currency, capped in the reports' one.
        const priceMicros = this.rates.convert(bidMicros, currency, context.currency);
        const reportMicros = this.rates.convert(bidMicros, currency, auctionRules.reportCurrency);
        if (problem === undefined && (priceMicros === undefined || reportMicros === undefined)) {
          problem = { reason: "currency-no-rate", detail: `no rate converts ${currency} to ${context.currency} and ${auctionRules.reportCurrency}` };
        }
        if (problem === undefined && valid.adm === undefined && valid.nurl === undefined) {
          problem = { reason: "markup-mismatch", detail: "bid has neither adm nor nurl: no markup to serve" };
        }
        // Reached with an object adm only in lenient mode (strict mode rejected it: native-markup-object).
        if (problem === undefined && typeof valid.adm === "object") valid.adm = JSON.stringify(valid.adm);
        // Before the markup checks (the costly ones): a bid whose notices the exchange may not call cannot compete.
        problem ??= noticeRefusal(valid, bidder.noticeOrigins);
        problem ??= checkBid(valid as TextMarkupBid, { auction: priceMicros!, report: reportMicros! }, bidder.maxPriceMicros, slot!.rules, context.rules);
        if (problem !== undefined) return this.rejectBid(context, bidder, problem, isObject(bid) ? bid.id : undefined, isObject(bid) ? bid.impid : undefined);
        bidder.counters.validBids++;
        slot!.candidates.push({ bidder, bid: valid as TextMarkupBid, seat: seatId, priceMicros: priceMicros!, currency, responseBidId, seq: context.seq++ });
        if (!answeredImps.has(valid.impid)) {
          answeredImps.add(valid.impid);
          const demand = slot!.demand.get(id)!;
          context.increments.push({ side: "demand", key: demand.key, id: demand.id, counts: RESPONSE });
        }
      });
    });
    if (bidsSeen === 0) {
      const problem = responseProblem ?? [...seatProblems.values()][0] ?? { reason: "invalid-response" as const, detail: "seatbid holds no bid" };
      this.rejectBid(context, bidder, problem, undefined, undefined);
    }
  }

  /**
   * Counts what lenient mode changed in a bidder's answer, per rule; the bids it dropped count as
   * bids received and as rejections under their rule's reason (auction-rejections rules), as the
   * same bids would in strict mode.
   */
  private lenientChanges(context: AuctionContext, bidder: BidderRuntime, response: Record<string, any>, changes: readonly Normalisation[]): void {
    this.counters.lenientChanges(bidder.counters.lenient, changes);
    for (const change of changes) {
      if (change.action !== "drop") continue;
      const dropped = bidsAt(response, change.path);
      const reason = auctionRejectionOfRule[change.rule] ?? "invalid-response";
      for (const bid of dropped) {
        bidder.counters.bids++;
        this.rejectBid(context, bidder, { reason, detail: `${change.path}: dropped in lenient mode [${change.rule}]` }, bid?.id, bid?.impid);
      }
    }
  }

  private bidderFault(context: AuctionContext, bidder: BidderRuntime, reason: AuctionRejection, detail: string): void {
    this.counters.fault(bidder.config.id, reason);
    bidder.faultCount++;
    // Per auction, so at debug: counted per bidder and reason in stats() and /metrics, summed up each second at info.
    this.logger.debug?.({ auction: context.request.id, bidder: bidder.config.id, reason, detail }, "bidder answer counted as no-bid");
  }

  private rejectBid(context: AuctionContext, bidder: BidderRuntime, problem: Rejection, bidId: unknown, impId: unknown): void {
    this.counters.rejection(bidder.config.id, problem.reason);
    this.logger.debug?.({ auction: context.request.id, bidder: bidder.config.id, bid: bidId, imp: impId, reason: problem.reason, detail: problem.detail }, "bid rejected");
  }

  /** Per imp: the highest valid bid, ties to the earliest received; its clearing price. */
  private pickWinners(context: AuctionContext): Winner[] {
    const winners: Winner[] = [];
    for (const slot of context.slots.values()) {
      if (slot.candidates.length === 0) continue;
      const ranked = slot.candidates.sort((a, b) => b.priceMicros - a.priceMicros || a.seq - b.seq);
      const [first, second] = ranked;
      const clearingMicros = clearingPrice({ at: context.request.at, winner: first.priceMicros, second: second?.priceMicros, floor: slot.rules.floorMicros });
      winners.push({ slot, candidate: first, clearingMicros });
    }
    return winners;
  }

  /**
   * A winning bid without adm serves the body of its nurl: the win notice is called now, within
   * the deadline, and its body (macros replaced) becomes adm. A failed call drops the bid; the
   * imp then has no winner (that bidder has been told it won, so no runner-up is promoted).
   */
  private async fetchMissingMarkup(context: AuctionContext, winners: Winner[], deadline: number): Promise<void> {
    const pending = winners.filter((w) => w.candidate.bid.adm === undefined);
    if (pending.length === 0) return;
    const ms = deadline - performance.now();
    await Promise.all(
      pending.map(async (winner) => {
        const { candidate, slot } = winner;
        const url = replaceMacros(candidate.bid.nurl!, this.macroValues(context, winner), "url");
        const result = await this.notices.fetchMarkup(url, ms);
        if (result.markup !== undefined && markupFits(result.markup, slot.rules.kinds, this.lenient)) {
          winner.markup = result.markup;
          return;
        }
        const detail = result.error ?? `markup from the win notice is not ${slot.rules.kinds.map(describe).join(" or ")}`;
        this.rejectBid(context, candidate.bidder, { reason: "markup-unavailable", detail }, candidate.bid.id, candidate.bid.impid);
        winners.splice(winners.indexOf(winner), 1);
      }),
    );
  }

  private macroValues(context: AuctionContext, winner: Winner): MacroValues {
    const { candidate } = winner;
    return {
      auctionId: context.request.id,
      bidId: candidate.responseBidId,
      impId: candidate.bid.impid,
      seatId: candidate.seat,
      adId: candidate.bid.adid,
      // OpenRTB 2.5 4.4: the clearing price in the bid's own currency and units.
      price: formatMicros(this.rates.convert(winner.clearingMicros, context.currency, candidate.currency) ?? winner.clearingMicros),
      currency: candidate.currency,
    };
  }

  /** The bid response: one winning bid per imp, grouped by seat; 204 when no imp has one. */
  private answer(context: AuctionContext, winners: Winner[]): OperationOutput {
    if (winners.length === 0) return { status: 204 };
    const currency = context.currency;
    const seats = new Map<string, Bid[]>();
    const expires = this.clock() + this.billingTtlMs;
    for (const winner of winners) {
      const { candidate, slot } = winner;
      const values = this.macroValues(context, winner);
      const { nurl, lurl, ...bid } = candidate.bid;
      const claims: BillingClaims = {
        jti: newTokenId(),
        aid: context.request.id,
        iid: slot.imp.id,
        seat: candidate.seat,
        // The reports' currency: what the billing call records (the rates have a pair, or the bid could not compete).
        px: this.rates.convert(winner.clearingMicros, currency, auctionRules.reportCurrency) ?? 0,
        cur: auctionRules.reportCurrency,
        burl: bid.burl !== undefined ? replaceMacros(bid.burl, values, "url") : undefined,
        k: encodeAuctionKey({ ...slot.supplyKey, bidder_id: candidate.bidder.config.id }),
        exp: expires,
      };
      const burl = `${this.publicUrl}/events/billing?token=${sealBillingToken(claims, this.billingKeys)}`;
      if (burl.length > auctionRules.maxBurlLength) {
        // The billing URL could not travel to the device whole: no bid for this imp rather than one nobody can bill.
        this.rejectBid(context, candidate.bidder, { reason: "burl-too-long", detail: `the billing URL would be ${burl.length} characters (max-burl-length ${auctionRules.maxBurlLength})` }, bid.id, bid.impid);
        continue;
      }
      const markup = winner.markup ?? bid.adm!;
      const out: Bid = {
        ...bid,
        price: fromMicros(winner.clearingMicros),
        // The markup passed its check for one of these kinds: its values are escaped for that kind.
        adm: replaceMacros(markup, values, markupKind(markup, slot.rules.kinds, this.lenient) ?? "banner"),
        burl,
      };
      let list = seats.get(candidate.seat);
      if (list === undefined) seats.set(candidate.seat, (list = []));
      list.push(out);
      if (winner.markup === undefined && nurl !== undefined) {
        // Queued: the notice sender holds it for its batch, so the answer does not wait for it.
        this.noticeQueue.send("win", replaceMacros(nurl, values, "url"), { auction: context.request.id, bidder: candidate.bidder.config.id, imp: slot.imp.id });
      }
      candidate.bidder.counters.wins++;
      this.counters.impsWon++;
      context.increments.push({ side: "supply", key: slot.supplyKey, id: slot.supplyId, counts: RESPONSE });
    }
    if (seats.size === 0) return { status: 204 };
    const body: BidResponse = {
      id: context.request.id,
      cur: currency,
      seatbid: [...seats].map(([seat, bid]): SeatBid => (seat === "" ? { bid: bid as SeatBid["bid"] } : { seat, bid: bid as SeatBid["bid"] })),
    };
    return { status: 200, body };
  }

  /** Seals new billing tokens with `ring`'s first key and opens them with any of its keys (a key rotation step). */
  useBillingKeys(ring: SealKeyRing): void {
    this.billingKeys = ring;
  }

  /** GET /events/billing?token=…: 403 for a forged, malformed or expired token; else 204, counted once. */
  async billing(input: OperationInput<unknown>): Promise<OperationOutput> {
    const token = isObject(input.payload) ? input.payload.token : undefined;
    const verdict = openBillingToken(token, this.billingKeys, this.clock());
    if (!verdict.ok) {
      this.counters.billing[verdict.rule === "billing-token-expired" ? "expired" : "invalid"]++;
      return ruleRefusal(verdict.rule, verdict.message, { path: "/token" });
    }
    const { claims: c, key } = verdict;
    if (this.seenTokens.has(c.jti)) {
      this.counters.billing.duplicate++;
      return { status: 204 };
    }
    // Money counters count nano-dollars: a CPM in micro-units is that per impression.
    const counts: FactCounts = { impression: 1, revenue: c.px };
    const supplyKey = supplyKeyOf(key);
    const demandKey = demandKeyOf(key);
    // A 204 means counted: a fact the store would refuse at the flush is refused here, unacknowledged.
    const refused = storeRefusal("supply", supplyKey, counts) ?? storeRefusal("demand", demandKey, counts);
    if (refused !== undefined) {
      this.counters.billing.refused++;
      this.logger.error({ auction: c.aid, imp: c.iid, problem: refused }, "billing call refused: the report store would not keep its impression");
      return ruleRefusal("billing-fact-refused", `the impression cannot be recorded: ${refused}`, { path: "/token" });
    }
    this.seenTokens.set(c.jti, c.exp);
    try {
      // Acknowledged only once on disk: the 204 is the device's proof that the impression counts.
      await this.facts.record(
        [
          { side: "supply", key: supplyKey, id: this.facts.supplyId(supplyKey), counts },
          { side: "demand", key: demandKey, id: this.facts.demandId(demandKey), counts },
        ],
        { billingToken: { id: c.jti, expiresAt: c.exp }, sync: true },
      );
    } catch (error) {
      // Counted in memory (a repeat is a duplicate), but not crash-safe: tell the device to call again.
      this.counters.spoolFailures++;
      this.logger.error({ err: error, auction: c.aid, imp: c.iid }, "spool write failed; billing call answered 503");
      return ruleRefusal("billing-not-recorded", "the billing call could not be recorded durably; call again later");
    }
    this.counters.billing.recorded++;
    if (c.burl !== undefined) this.noticeQueue.send("billing", c.burl, { auction: c.aid, bidder: key.bidder_id, imp: c.iid });
    return { status: 204 };
  }

  /**
   * After a crash: the billing tokens the store has counted, then the spool lines after the
   * store's checkpoint, replayed into the aggregate and flushed. Appends go to a new segment
   * from here on. Call once, before the first auction; nothing to do without a spool.
   */
  async recover(): Promise<{ replayed: number; skipped: number; billingTokens: number }> {
    if (this.spool === undefined) return { replayed: 0, skipped: 0, billingTokens: 0 };
    if (this.options.sink.recoveryState === undefined) throw new TypeError("an exchange with a spool needs a sink with recoveryState (a report store)");
    const state = await this.options.sink.recoveryState(this.facts.checkpointName!, this.clock());
    for (const token of state.billingTokens) this.seenTokens.set(token.id, token.expiresAt);
    let replayed = 0;
    let skipped = 0;
    for (const { record, position } of this.spool.replay(parsePosition(state.position))) {
      try {
        for (const token of this.facts.replay(record)) this.seenTokens.set(token.id, token.expiresAt);
        replayed++;
      } catch (error) {
        // Written by a newer adxkit: skipping would lose its counts; keep the spool and stop.
        if (error instanceof SpoolVersionError) throw new SpoolVersionError(`${this.spool.dir}, segment ${position.segment}, line ${position.line}: ${error.message}`);
        skipped++;
        this.logger.error({ err: error, segment: position.segment, line: position.line }, "spool line skipped");
      }
    }
    this.spool.start();
    if (replayed > 0) {
      await this.facts.flush();
      this.logger.warn({ replayed, skipped, spool: this.spool.dir }, "replayed spool lines the report store did not hold (the last run ended without its final flush)");
    }
    return { replayed, skipped, billingTokens: state.billingTokens.length };
  }

  private sweepTokens(): void {
    const now = this.clock();
    for (const [jti, exp] of this.seenTokens) if (exp <= now) this.seenTokens.delete(jti);
  }

  /** Writes pending facts now (tests and the demo; the timer does it otherwise). */
  flushFacts(): Promise<number> {
    return this.facts.flush();
  }

  /** Waits for notices in flight (bounded), flushes the facts, closes the pools. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.sweeper);
      this.lag?.stop();
      this.auctionKeys?.close();
      await this.noticeQueue.close(this.options.closeGraceMs ?? 1000);
      await this.facts.close();
      await this.spool?.close();
      await this.http.close();
    })();
    return this.closing;
  }

  /** Counters of auctions, bidders, billing, notices and facts. */
  stats() {
    const circuits: Record<string, CircuitSnapshot> = {};
    for (const bidder of this.bidders) if (bidder.breaker !== undefined) circuits[bidder.config.id] = bidder.breaker.snapshot();
    return { ...this.counters.snapshot(), circuits, notices: this.noticeQueue.stats(), facts: this.facts.stats(), spool: this.spool?.stats(), seenBillingTokens: this.seenTokens.size };
  }
}
