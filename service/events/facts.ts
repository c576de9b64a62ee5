/**
 * Hourly facts the exchange writes for the reports, batched off the hot path: auctions and
 * billing events add counts to an in-memory aggregate keyed by the fact's key; a timer (and
 * close) hands the aggregate to the sink in one `ingest` call.
 */
import type { DemandFact, Fact, ReportStore, SupplyFact } from "../store/store.js";

export type { DemandFact, Fact, SupplyFact };

/** Where facts go: the report store, or anything with its `ingest`. */
export type FactSink = Pick<ReportStore, "ingest">;

/** The key of a supply fact. */
export type SupplyKey = Pick<SupplyFact, "date_hour" | "publisher_id" | "app_bundle_id" | "placement_id" | "ad_format" | "platform" | "country">;
/** The key of a demand fact. */
export type DemandKey = Pick<DemandFact, "date_hour" | "bidder_id" | "ad_format" | "platform">;

/** Counts to add to one key. Revenue is given as the sum of the impressions' CPM in micro-units. */
export interface FactCounts {
  request?: number;
  response?: number;
  impression?: number;
  /** Σ clearing price (CPM, micro-units) of the impressions; revenue = this / 1e9 (CPM / 1000). */
  cpmMicros?: number;
}

/** A logger with pino's shape (Fastify's `app.log` fits). */
export interface EventLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

interface Entry {
  key: SupplyKey | DemandKey;
  side: "supply" | "demand";
  request: number;
  response: number;
  impression: number;
  cpmMicros: number;
}

export interface FactAggregatorOptions {
  sink: FactSink;
  /** Flush period in milliseconds (default 1000). */
  flushMs?: number;
  logger?: EventLogger;
}

const SEP = "\u0000";
const noop = () => {};
const silent: EventLogger = { info: noop, warn: noop, error: noop };

/** Adds counts up per fact key and flushes them to the sink every `flushMs` and on close. */
export class FactAggregator {
  private pending = new Map<string, Entry>();
  private readonly sink: FactSink;
  private readonly logger: EventLogger;
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<number> | undefined;
  private closed = false;
  private counters = { flushes: 0, factsWritten: 0, failedFlushes: 0, factsDropped: 0 };

  constructor(options: FactAggregatorOptions) {
    this.sink = options.sink;
    this.logger = options.logger ?? silent;
    this.timer = setInterval(() => void this.flush(), options.flushMs ?? 1000);
    this.timer.unref();
  }

  /** The aggregate's id of a supply key (pass it back to `supply` when adding to the same key again). */
  supplyId(key: SupplyKey): string {
    return `s${SEP}${key.date_hour}${SEP}${key.publisher_id}${SEP}${key.app_bundle_id}${SEP}${key.placement_id}${SEP}${key.ad_format}${SEP}${key.platform}${SEP}${key.country}`;
  }

  /** The aggregate's id of a demand key. */
  demandId(key: DemandKey): string {
    return `d${SEP}${key.date_hour}${SEP}${key.bidder_id}${SEP}${key.ad_format}${SEP}${key.platform}`;
  }

  /** Adds counts to a supply key. */
  supply(key: SupplyKey, counts: FactCounts, id = this.supplyId(key)): void {
    this.add(id, "supply", key, counts);
  }

  /** Adds counts to a demand key. */
  demand(key: DemandKey, counts: FactCounts, id = this.demandId(key)): void {
    this.add(id, "demand", key, counts);
  }

  private add(id: string, side: Entry["side"], key: SupplyKey | DemandKey, counts: FactCounts): void {
    let entry = this.pending.get(id);
    if (entry === undefined) {
      entry = { key: { ...key }, side, request: 0, response: 0, impression: 0, cpmMicros: 0 };
      this.pending.set(id, entry);
    }
    entry.request += counts.request ?? 0;
    entry.response += counts.response ?? 0;
    entry.impression += counts.impression ?? 0;
    entry.cpmMicros += counts.cpmMicros ?? 0;
  }

  /**
   * Hands everything pending to the sink; returns how many facts it loaded. One flush at a
   * time: a call during a flush waits for it and then flushes what came in meanwhile.
   */
  async flush(): Promise<number> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return 0;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write(batch).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(batch: Map<string, Entry>): Promise<number> {
    const ids = [...batch.keys()];
    let facts = ids.map((id) => toFact(batch.get(id)!));
    // The store loads all or nothing; a fact it refuses is dropped (and logged) so the rest still loads.
    for (let attempt = 0; attempt <= facts.length; attempt++) {
      try {
        const written = await this.sink.ingest(facts);
        this.counters.flushes++;
        this.counters.factsWritten += written;
        return written;
      } catch (error) {
        const line = (error as { line?: unknown }).line;
        if (typeof line === "number" && Number.isInteger(line) && line >= 1 && line <= facts.length) {
          this.counters.factsDropped++;
          this.logger.error({ err: error, fact: facts[line - 1] }, "report store refused a fact; dropped");
          facts = facts.filter((_, index) => index !== line - 1);
          ids.splice(line - 1, 1);
          if (facts.length === 0) return 0;
          continue;
        }
        this.counters.failedFlushes++;
        if (this.closed) {
          this.counters.factsDropped += facts.length;
          this.logger.error({ err: error, facts: facts.length }, "report store failed on the last flush; facts lost");
          return 0;
        }
        // Put the batch back: its counts add to what arrived meanwhile and go out with the next flush.
        this.logger.warn({ err: error, facts: facts.length }, "report store failed; facts kept for the next flush");
        for (const id of ids) {
          const entry = batch.get(id)!;
          this.add(id, entry.side, entry.key, entry);
        }
        return 0;
      }
    }
    return 0;
  }

  /** Stops the timer and flushes what is pending. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.flush();
  }

  /** Counters, and how many keys wait for the next flush. */
  stats(): { pendingKeys: number; flushes: number; factsWritten: number; failedFlushes: number; factsDropped: number } {
    return { pendingKeys: this.pending.size, ...this.counters };
  }
}

function toFact(entry: Entry): Fact {
  const metrics = { request: entry.request, response: entry.response, impression: entry.impression, revenue: entry.cpmMicros / 1e9 };
  return entry.side === "supply"
    ? ({ side: "supply", ...(entry.key as SupplyKey), ...metrics } satisfies SupplyFact)
    : ({ side: "demand", ...(entry.key as DemandKey), ...metrics } satisfies DemandFact);
}
