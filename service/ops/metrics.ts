/**
 * The server's Prometheus metrics (GET /metrics), on prom-client. Counters the exchange already
 * keeps (stats()) are read when Prometheus scrapes, so the hot path pays nothing for them; only
 * the latency histograms are observed as things happen. Every metric is listed, with its
 * labels, in docs/operations.md.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ExchangeHandle } from "../auction/index.js";
import type { LenientCounts } from "../auction/stats.js";

type ExchangeSnapshot = ReturnType<ExchangeHandle["stats"]>;
type Labels = Record<string, string>;

/** Latency buckets in seconds: auctions and bidder calls live within tmax (at most 3 s). */
const AUCTION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 3];
/** Report queries run from milliseconds to the request timeout (30 s). */
const REPORT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The circuit states as numbers, for a gauge: 0 closed, 1 half-open (probing), 2 open (skipped). */
export const CIRCUIT_STATE_VALUES = { closed: 0, "half-open": 1, open: 2 } as const;

/** What the settling of billed impressions (service/ops/settling.ts) tells the metrics. */
export interface SettleObserver {
  /** A run ended: the days it settled (or settled again), by side. */
  settled(run: Readonly<Record<string, readonly string[]>>): void;
  failed(): void;
}

/** The outcome label of an auction's HTTP status. */
export function auctionOutcome(status: number): string {
  if (status === 200) return "won";
  if (status === 204) return "no_bid";
  if (status === 400 || status === 413) return "invalid";
  return "error";
}

/** The metrics of one server: a registry of its own (tests build several servers in one process). */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly auctionSeconds: Histogram<"outcome">;
  private readonly bidderSeconds: Histogram<"bidder" | "outcome">;
  private readonly reportSeconds: Histogram<"interface">;
  private exchange: (() => ExchangeSnapshot) | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.auctionSeconds = new Histogram({ name: "adxkit_auction_duration_seconds", help: "Time from a bid request's arrival to its answer, by outcome (won, no_bid, invalid, error)", labelNames: ["outcome"], buckets: AUCTION_BUCKETS, registers: [this.registry] });
    this.bidderSeconds = new Histogram({ name: "adxkit_bidder_response_seconds", help: "Time from the fan-out to a bidder's answer, fault or deadline, by bidder and outcome (answer, no-bid, fault)", labelNames: ["bidder", "outcome"], buckets: AUCTION_BUCKETS, registers: [this.registry] });
    this.reportSeconds = new Histogram({ name: "adxkit_report_query_duration_seconds", help: "Time to answer a report request, by interface (demand: A, supply: B)", labelNames: ["interface"], buckets: REPORT_BUCKETS, registers: [this.registry] });
    this.fromExchange();
  }

  /** Reads the exchange's counters at each scrape. */
  watchExchange(stats: () => ExchangeSnapshot): void {
    this.exchange = stats;
  }

  observeAuction(status: number, seconds: number): void {
    this.auctionSeconds.observe({ outcome: auctionOutcome(status) }, seconds);
  }

  /** For ExchangeOptions.onBidderCall. */
  observeBidderCall(bidder: string, ms: number, outcome: string): void {
    this.bidderSeconds.observe({ bidder, outcome }, ms / 1000);
  }

  observeReport(side: "demand" | "supply", seconds: number): void {
    this.reportSeconds.observe({ interface: side }, seconds);
  }

  /**
   * The settling series (only on a store that settles: ClickHouse), `lateBilledRows` read at each
   * scrape; what a run did goes to the observer returned.
   */
  watchSettling(lateBilledRows: () => Readonly<Record<string, number>>): SettleObserver {
    const registers = [this.registry];
    const runs = new Counter({ name: "adxkit_settle_runs_total", help: "Runs settling billed impressions into per-day sums, by result (ok, failed)", labelNames: ["result"], registers });
    const days = new Counter({ name: "adxkit_settle_days_total", help: "Days of billed impressions settled, or settled again for late rows, by side", labelNames: ["side"], registers });
    const lastSuccess = new Gauge({ name: "adxkit_settle_last_success_timestamp_seconds", help: "When the last settling run that succeeded ended, in Unix seconds (0: none yet)", registers });
    new Counter({
      name: "adxkit_settle_late_billed_rows_total",
      help: "Billed rows this node wrote after their day could have been settled (a replayed spool, a retried flush), by side; their days are settled again",
      labelNames: ["side"],
      registers,
      collect() {
        this.reset();
        for (const [side, rows] of Object.entries(lateBilledRows())) this.inc({ side }, rows);
      },
    });
    // Both results from the start, so a rate over the failures exists before the first one.
    for (const result of ["ok", "failed"]) runs.inc({ result }, 0);
    return {
      settled(run) {
        runs.inc({ result: "ok" });
        for (const [side, list] of Object.entries(run)) days.inc({ side }, list.length);
        lastSuccess.set(Date.now() / 1000);
      },
      failed() {
        runs.inc({ result: "failed" });
      },
    };
  }

  /** The metrics in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Counters and gauges whose values are the exchange's stats() at scrape time. */
  private fromExchange(): void {
    const snapshot = () => this.exchange?.();
    const counter = (name: string, help: string, labelNames: string[], values: (s: ExchangeSnapshot) => [Labels, number][]) =>
      new Counter({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect() {
          const s = snapshot();
          this.reset();
          if (s) for (const [labels, value] of values(s)) this.inc(labels, value);
        },
      });
    const gauge = (name: string, help: string, labelNames: string[], values: (s: ExchangeSnapshot) => [Labels, number][]) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect() {
          const s = snapshot();
          this.reset();
          if (s) for (const [labels, value] of values(s)) this.set(labels, value);
        },
      });
    const perBidder = (s: ExchangeSnapshot) => Object.entries(s.bidders);
    const lenientLabels = (counts: LenientCounts, labels: Labels): [Labels, number][] =>
      Object.entries(counts).flatMap(([action, byRule]) => Object.entries(byRule ?? {}).map(([rule, n]): [Labels, number] => [{ ...labels, action, rule }, n]));
    const byReason = (s: ExchangeSnapshot, kind: "faults" | "rejections"): [Labels, number][] =>
      perBidder(s).flatMap(([bidder, c]) => Object.entries(c[kind]).map(([reason, n]): [Labels, number] => [{ bidder, reason }, n ?? 0]));

    counter("adxkit_auctions_total", "Bid requests by outcome: won (200), no_bid (204), invalid (400)", ["outcome"], (s) => [
      [{ outcome: "won" }, s.answered],
      [{ outcome: "no_bid" }, s.noBid],
      [{ outcome: "invalid" }, s.invalidRequests],
    ]);
    counter("adxkit_auctions_late_total", "Auctions whose answer left the handler after tmax + 10 ms", [], (s) => [[{}, s.late]]);
    counter("adxkit_auctions_overloaded_total", "Auctions answered 204 at once, x-adxkit-no-bid: overloaded, by reason: admission_limit, the admission rate had no room for it (body unread); too_late, the wait before it was read left the bidders less than shed-below-ms", ["reason"], (s) => [
      [{ reason: "admission_limit" }, s.overloaded - s.overloadedTooLate],
      [{ reason: "too_late" }, s.overloadedTooLate],
    ]);
    gauge("adxkit_auction_admission_rate", "Auctions a second admitted before the next request is shed unread (adaptive: x-adxkit-auction overload); +Inf while the event loop keeps up", [], (s) => (s.admission ? [[{}, s.admission.rate ?? Infinity]] : []));
    gauge("adxkit_auctions_in_flight", "Auctions admitted and not yet answered (under load shedding)", [], (s) => (s.admission ? [[{}, s.admission.inFlight]] : []));
    gauge("adxkit_event_loop_utilisation", "The event loop's busy share over the last admission window (under load shedding)", [], (s) => (s.admission ? [[{}, s.admission.utilisation]] : []));
    counter("adxkit_auction_admission_cuts_total", "Admission windows that cut the admission rate: the event loop behind by more than admission-lag-ms throughout them and the window before (a standing queue), and busier than admission-target-utilisation", [], (s) => (s.admission ? [[{}, s.admission.cuts]] : []));
    counter("adxkit_auctions_currency_unsupported_total", "Auctions answered 204 at once: no currency of the request's cur converts to the reports' currency", [], (s) => [[{}, s.currencyUnsupported]]);
    counter("adxkit_auction_imps_total", "Imps offered in valid bid requests, and imps won", ["result"], (s) => [
      [{ result: "offered" }, s.impsOffered],
      [{ result: "won" }, s.impsWon],
    ]);
    counter("adxkit_bidder_requests_total", "Bid requests sent, per bidder", ["bidder"], (s) => perBidder(s).map(([bidder, c]) => [{ bidder }, c.requests]));
    counter("adxkit_bidder_bids_total", "Bids received, per bidder", ["bidder"], (s) => perBidder(s).map(([bidder, c]) => [{ bidder }, c.bids]));
    counter("adxkit_bidder_no_bids_total", "No-bids (HTTP 204, an empty body or no seatbid), per bidder", ["bidder"], (s) => perBidder(s).map(([bidder, c]) => [{ bidder }, c.noBids]));
    counter("adxkit_bidder_wins_total", "Bids that won an imp, per bidder", ["bidder"], (s) => perBidder(s).map(([bidder, c]) => [{ bidder }, c.wins]));
    counter("adxkit_bidder_faults_total", "Answers that were faults (timeout, connection-error, http-error, malformed-response, wrong-request-id), per bidder and reason", ["bidder", "reason"], (s) => byReason(s, "faults"));
    counter("adxkit_bidder_rejections_total", "Bids rejected, per bidder and reason (spec/errors.yaml auction-rejections)", ["bidder", "reason"], (s) => byReason(s, "rejections"));
    counter("adxkit_request_lenient_changes_total", "Lenient mode: parts of bid requests dropped and values normalised, by action and rule (spec: each rule's lenient policy)", ["action", "rule"], (s) =>
      lenientLabels(s.requestChanges, {}),
    );
    counter("adxkit_bidder_lenient_changes_total", "Lenient mode: parts of bidders' answers dropped and values normalised, per bidder, action and rule", ["bidder", "action", "rule"], (s) =>
      perBidder(s).flatMap(([bidder, c]) => lenientLabels(c.lenient, { bidder })),
    );
    gauge("adxkit_bidder_circuit_state", "Circuit breaker per bidder: 0 closed, 1 half-open (one probe), 2 open (skipped)", ["bidder"], (s) =>
      Object.entries(s.circuits).map(([bidder, c]) => [{ bidder }, CIRCUIT_STATE_VALUES[c.state]]),
    );
    counter("adxkit_bidder_circuit_opened_total", "Times a bidder's circuit opened", ["bidder"], (s) => Object.entries(s.circuits).map(([bidder, c]) => [{ bidder }, c.opened]));
    counter("adxkit_bidder_circuit_skipped_total", "Bid requests not sent because the bidder's circuit was open", ["bidder"], (s) => Object.entries(s.circuits).map(([bidder, c]) => [{ bidder }, c.skipped]));
    counter("adxkit_notices_total", "Win and billing notices to bidders, by kind and result (sent, delivered, retried, failed, dropped)", ["kind", "result"], (s) =>
      (["win", "billing"] as const).flatMap((kind) =>
        (["sent", "delivered", "retried", "failed", "dropped"] as const).map((result): [Labels, number] => [{ kind, result }, s.notices[kind][result]]),
      ),
    );
    gauge("adxkit_notices_pending", "Notices waiting for their batch, in flight or waiting for a retry", [], (s) => [[{}, s.notices.pending]]);
    counter("adxkit_billing_events_total", "Billing calls by result (recorded, duplicate, invalid, expired, refused)", ["result"], (s) => Object.entries(s.billing).map(([result, n]) => [{ result }, n]));
    gauge("adxkit_spool_backlog_lines", "Spool lines whose counts the report store does not hold yet", [], (s) => [[{}, s.facts.spoolBacklog]]);
    counter("adxkit_spool_failures_total", "Auctions and billing calls whose spool line could not be written", [], (s) => [[{}, s.spoolFailures]]);
    gauge("adxkit_store_flush_lag_seconds", "How long the oldest count not yet in the report store has waited (0: none waits)", [], (s) => [[{}, s.facts.lagMs / 1000]]);
    counter("adxkit_store_flushes_total", "Flushes of the aggregated facts to the report store, by result", ["result"], (s) => [
      [{ result: "ok" }, s.facts.flushes],
      [{ result: "failed" }, s.facts.failedFlushes],
    ]);
    counter("adxkit_store_facts_dropped_total", "Facts the report store refused (logged), or lost on a failed last flush", [], (s) => [[{}, s.facts.factsDropped]]);
  }
}
