/**
 * The exchange's two operations (spec/openapi/bidding.yaml): `auction` fans a bid request out
 * to the eligible bidders, checks every bid, runs one auction per imp and answers the winners;
 * `billingEvent` verifies the token of the exchange's own burl, records the impression once and
 * calls the bidder's burl. Reports are fed through the fact aggregator, notices through the
 * notice sender; neither is awaited on the hot path.
 */
import { performance } from "node:perf_hooks";
import { auctionRules, type BidRequest } from "@adxkit/bindings";
import type { OperationInput, OperationOutput } from "@adxkit/bindings/fastify";
import { FactAggregator, SpoolVersionError, type EventLogger } from "../events/facts.js";
import { parsePosition, Spool } from "../events/spool.js";
import { AuctionKeys, type AuctionAccount } from "../accounts/auction-keys.js";
import { createAuthThrottle } from "../accounts/throttle.js";
import { ruleRefusal } from "../rule-refusal.js";
import { auctionCurrency, DemandFacts, openAuction, type AuctionEnv, type BidderRuntime } from "./auction-context.js";
import { AuctionGate, type Admission } from "./auction-auth.js";
import { answerArrived } from "./bidder-answers.js";
import { bidResponse, type AnswerSettings } from "./bid-response.js";
import { BillingCalls } from "./billing-calls.js";
import { CircuitBreaker, type CircuitSnapshot } from "./circuit-breaker.js";
import { CurrencyConverter } from "./currency.js";
import { bidderBudget, DEFAULT_TMAX_MS, effectiveTmax, MARKUP_FETCH_SAFETY_MS, SHED_BELOW_MS } from "./deadline.js";
import type { ExchangeOptions } from "./exchange-options.js";
import { fanOut, type FanOutDeps } from "./fan-out.js";
import { HttpClient } from "./http-client.js";
import { isSafeCpm, MAX_SAFE_CPM, toMicros } from "./money.js";
import { NoticeOrigins } from "./notice-origins.js";
import { NoticeThread } from "./notice-thread.js";
import { NoticeSender } from "./notices.js";
import { AdmissionRate, LoopLagProbe } from "./overload.js";
import { ExchangeStats } from "./stats.js";
import type { SealKeyRing } from "./token-seal.js";
import { fetchMissingMarkup, pickWinners } from "./winners.js";

export type { ExchangeOptions } from "./exchange-options.js";

/** A request admitted before Fastify saw it (Exchange.admitEarly): when it arrived (arrivedAt) and its caller's account (null: an open auction). */
export interface EarlyAdmission {
  startedAt: number;
  account: AuctionAccount | null;
}

/** The 204 of an auction not run for want of a currency it can trade in (x-adxkit-auction currency). */
const NO_CURRENCY_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "x-adxkit-no-bid": "currency-unsupported" });
/** The 204 of an auction not run (spec: the auction's 204, header x-adxkit-no-bid). */
export const SHED_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "x-adxkit-no-bid": "overloaded" });
/** The answer to an auction shed, unread or too late to run (never changed after: frozen). */
const SHED_OUTPUT: OperationOutput = Object.freeze({ status: 204, headers: SHED_HEADERS });
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

/**
 * The exchange: state shared by all auctions (pools, notices, facts, seen billing tokens). Each
 * auction goes through openAuction (auction-context.ts), fanOut (fan-out.ts), answerArrived per
 * bidder (bidder-answers.ts), pickWinners and fetchMissingMarkup (winners.ts), bidResponse
 * (bid-response.ts); billing calls through BillingCalls (billing-calls.ts).
 */
export class Exchange {
  private readonly env: AuctionEnv;
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
  private readonly defaultTmaxMs: number;
  private readonly counters = new ExchangeStats();
  private readonly fanOutDeps: FanOutDeps;
  private readonly answerSettings: AnswerSettings;
  private readonly billingCalls: BillingCalls;
  private closing: Promise<void> | undefined;
  /** The supply accounts' auction keys; undefined for an open auction. */
  private readonly auctionKeys: AuctionKeys | undefined;
  private readonly gate: AuctionGate | undefined;
  /** The event loop's lag, with load shedding on (overload.ts). */
  private readonly lag: LoopLagProbe | undefined;
  /** The rate auctions are admitted at, with load shedding on (overload.ts). */
  private readonly admission: AdmissionRate | undefined;

  constructor(private readonly options: ExchangeOptions) {
    this.logger = options.logger ?? silent;
    this.clock = options.clock ?? Date.now;
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
    this.env = {
      counters: this.counters,
      logger: this.logger,
      lenient: options.lenient === true,
      facts: this.facts,
      clock: this.clock,
      rates: options.currencyRates ?? new CurrencyConverter(),
      billingKeys: options.billingKeys,
    };
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
        demandFacts: new DemandFacts(config.id, this.facts),
      };
    });
    const env = this.env;
    this.fanOutDeps = {
      bidders: this.bidders,
      http: this.http,
      onAnswer: (context, bidder, sent, outcome, budgetMs, lateMs) => answerArrived(env, context, bidder, sent, outcome, budgetMs, lateMs),
      lateAnswerGraceMs: options.lateAnswerGraceMs ?? auctionRules.lateAnswerGraceMs,
      onBidderCall: options.onBidderCall,
    };
    this.answerSettings = { publicUrl: options.publicUrl.replace(/\/+$/, ""), billingTtlMs: options.billingTtlMs ?? auctionRules.billingTokenTtlMs, noticeQueue: this.noticeQueue };
    this.billingCalls = new BillingCalls(env, this.noticeQueue);
    const shedding = options.loadShedding;
    if (shedding) {
      const probe = shedding === true ? {} : shedding;
      this.lag = new LoopLagProbe(probe, (now, lateMs) => this.admission?.tick(now, lateMs));
      this.admission = new AdmissionRate(
        {
          windowMs: auctionRules.admissionWindowMs,
          lagMs: auctionRules.admissionLagMs,
          targetUtilisation: auctionRules.admissionTargetUtilisation,
          decrease: auctionRules.admissionDecrease,
          increase: auctionRules.admissionIncrease,
          probeStep: auctionRules.admissionProbeStep,
          liftWindows: auctionRules.admissionLiftWindows,
          burstMs: auctionRules.admissionBurstMs,
          inFlightMin: auctionRules.admissionInFlightMin,
          initialRate: Infinity,
          ...(shedding === true ? {} : shedding.admission),
        },
        this.lag.clock,
      );
    }
  }

  /**
   * When the request the exchange sees now arrived (performance.now() scale): now, less the
   * event loop's lag when load shedding is on (what it waited unseen, overload.ts).
   */
  arrivedAt(): number {
    return performance.now() - (this.lag?.waitedMs() ?? 0);
  }

  /**
   * With load shedding, whether an auction request may be read: true while the admission rate
   * has room for it (call `admissionDone` once its answer has left), else the 204 to answer at
   * once, before its body is read (so it counts in no report, only as overloaded). Undefined
   * without load shedding.
   */
  admitLoad(): true | OperationOutput | undefined {
    if (this.admission === undefined) return undefined;
    if (this.admission.admit()) return true;
    this.counters.auctions++;
    this.counters.overloaded++;
    this.counters.noBid++;
    return SHED_OUTPUT;
  }

  /**
   * Load shedding before Fastify sees the request (early-shed.ts): false to shed it at once
   * (counted as admitLoad counts it), else its arrival and caller, its place taken (call
   * `admissionDone` once its answer has left). Undefined where this cannot be decided here, and
   * Fastify's onRequest decides as before: no load shedding, or a caller whose key the table
   * does not hold now or whose address is throttled (a shed comes after the key check).
   */
  admitEarly(authorization: string | undefined, address: string | undefined): EarlyAdmission | false | undefined {
    if (this.admission === undefined) return undefined;
    let account: AuctionAccount | null = null;
    if (this.gate !== undefined) {
      account = this.gate.knownAccount(authorization, address) ?? null;
      if (account === null) return undefined;
    }
    const startedAt = this.arrivedAt();
    return this.admitLoad() === true ? { startedAt, account } : false;
  }

  /** An admitted auction's answer has left (or its connection closed): one fewer in flight. */
  admissionDone(): void {
    this.admission?.done();
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
    const currency = auctionCurrency(request, this.env.rates);
    const context = openAuction(this.env, request, currency ?? auctionRules.reportCurrency);
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
    } else if (bidderBudget(tmax, performance.now() - startedAt) < SHED_BELOW_MS) {
      // Too late to run (the request waited unseen, overload.ts): answered at once, counted. The
      // wait counts once here (startedAt has it): counting the timer slip too shed, after every
      // long turn of a busy loop, auctions with half their tmax left (most of the sheds measured).
      this.counters.overloaded++;
      this.counters.overloadedTooLate++;
      output = SHED_OUTPUT;
    } else {
      const sentAt = performance.now();
      // The bidders' timers will fire as late as the loop runs now: that slip is spent too, but
      // an auction worth running keeps shed-below-ms (bidders mostly answer well before it).
      const budget = Math.max(SHED_BELOW_MS, bidderBudget(tmax, sentAt - startedAt + this.timerSlipMs()));
      await fanOut(this.fanOutDeps, context, sentAt, budget);
      const winners = pickWinners(context);
      await fetchMissingMarkup(this.env, this.notices, context, winners, startedAt + tmax - MARKUP_FETCH_SAFETY_MS);
      output = bidResponse(this.env, this.answerSettings, context, winners);
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

  /** Uses new currency rates from the next auction on (adxkit serve re-reads its rates file on SIGHUP). */
  useCurrencyRates(rates: CurrencyConverter): void {
    this.env.rates = rates;
  }

  /** Seals new billing tokens with `ring`'s first key and opens them with any of its keys (a key rotation step). */
  useBillingKeys(ring: SealKeyRing): void {
    this.env.billingKeys = ring;
  }

  /** GET /events/billing?token=…: 403 for a forged, malformed or expired token; else 204, counted once (billing-calls.ts). */
  billing(input: OperationInput<unknown>): Promise<OperationOutput> {
    return this.billingCalls.billing(input);
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
    for (const token of state.billingTokens) this.billingCalls.remember(token.id, token.expiresAt);
    let replayed = 0;
    let skipped = 0;
    for (const { record, position } of this.spool.replay(parsePosition(state.position))) {
      try {
        for (const token of this.facts.replay(record)) this.billingCalls.remember(token.id, token.expiresAt);
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

  /** Writes pending facts now (tests and the demo; the timer does it otherwise). */
  flushFacts(): Promise<number> {
    return this.facts.flush();
  }

  /** Waits for notices in flight (bounded), flushes the facts, closes the pools. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.billingCalls.close();
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
    return { ...this.counters.snapshot(), admission: this.admission?.snapshot(), circuits, notices: this.noticeQueue.stats(), facts: this.facts.stats(), spool: this.spool?.stats(), seenBillingTokens: this.billingCalls.seen };
  }
}
