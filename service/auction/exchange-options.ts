/**
 * What an exchange is built from (registerExchange, new Exchange): its bidders, where facts go,
 * billing keys and rates, and the switches `adxkit serve` turns on (spool, notice thread,
 * circuit breaker, load shedding).
 */
import type { AuctionKeySource, AuctionKeysOptions } from "../accounts/auction-keys.js";
import type { AuthThrottle } from "../accounts/throttle.js";
import type { EventLogger, FactSink } from "../events/facts.js";
import type { BidderConfig } from "./bidders.js";
import type { CircuitBreakerOptions } from "./circuit-breaker.js";
import type { CurrencyConverter } from "./currency.js";
import type { CallOutcome } from "./http-client.js";
import type { NoticeOptions } from "./notices.js";
import type { AdmissionOptions, LagProbeOptions } from "./overload.js";
import type { SealKeyRing } from "./token-seal.js";

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
  /**
   * How long a bid call past its deadline may still answer (read and thrown away) before its
   * connection is closed (default x-adxkit-auction late-answer-grace-ms; tests change it).
   */
  lateAnswerGraceMs?: number;
  notices?: NoticeOptions;
  /**
   * Send win and billing notices from a worker thread (notice-thread.ts), off the event loop
   * that answers auctions. Off when absent; `adxkit serve` (startServer) turns it on.
   */
  noticeThread?: boolean;
  /**
   * Shed load instead of answering late (x-adxkit-auction overload, overload.ts): auctions are
   * admitted at an adaptive rate kept where the event loop keeps up; a request finding no room
   * is answered 204 before its body is read (`admitLoad`); the loop's lag counts as spent time,
   * and an auction left with less than shed-below-ms for its bidders is answered 204 at once;
   * both counted overloaded. Off when absent; `adxkit serve` (startServer) turns it on. Tests
   * pass the lag probe's clock and the rate's rules (the spec's admission-* by default).
   */
  loadShedding?: boolean | (LagProbeOptions & { admission?: AdmissionOptions });
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
