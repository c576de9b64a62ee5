/**
 * Hourly facts the exchange writes for the reports, batched off the hot path: auctions and
 * billing events add counts to an in-memory aggregate keyed by the fact's key; a timer (and
 * close) hands the aggregate to the sink in one `ingest` call.
 *
 * With a spool (service/events/spool.ts), each event is also added to the spool's line of the
 * current turn, in the same synchronous step as it joins the aggregate: the events of one turn of
 * the event loop share one line (their increments summed per key, their billing tokens listed),
 * written before any of them is answered. Every flush hands the store the spool position it
 * covers and the billing tokens it counts, written with the facts. After a crash the exchange
 * reads the store's checkpoint and `replay`s the lines after it.
 */
import { factProblem } from "../store/fact.js";
import type { CountedBillingToken, DemandFact, Fact, IngestOptions, ReportStore, SupplyFact } from "../store/store.js";
import { formatPosition, LineBuilder, type Spool, type SpoolPosition } from "./spool.js";

export type { CountedBillingToken, DemandFact, Fact, SupplyFact };

/** Where facts go: the report store, or anything with its `ingest` (a spool needs `recoveryState` too). */
export type FactSink = Pick<ReportStore, "ingest"> & Partial<Pick<ReportStore, "recoveryState">>;

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

/** Counts added to one supply or demand key by an event. `id` is the key's aggregate id (supplyId, demandId). */
export type FactIncrement =
  | { side: "supply"; key: SupplyKey; id: string; counts: FactCounts }
  | { side: "demand"; key: DemandKey; id: string; counts: FactCounts };

/** What an event records besides its counts. */
export interface EventOptions {
  /** The billing token the event counts (kept by the store so that a repeat after a restart counts once). */
  billingToken?: CountedBillingToken;
  /** Wait for the spool line to be on disk (fdatasync), not only written. */
  sync?: boolean;
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
  /** A started spool: every event is appended to it, and each flush records its checkpoint. */
  spool?: Spool;
}

const SEP = "\u0000";
const noop = () => {};
const silent: EventLogger = { info: noop, warn: noop, error: noop };
const done = Promise.resolve();

/** A spool line's increment: ["s", date_hour, publisher, bundle, placement, format, platform, country, request, response, impression, cpmMicros] or ["d", date_hour, bidder, format, platform, …counts]. */
type SpooledIncrement = (string | number)[];

/**
 * The spool line of the current turn, until the spool writes it: `f` the increments of its
 * events summed per aggregate id, `ts` their billing tokens as [id, expiresAt]. (Lines of
 * earlier versions held one event each, its token as `t`; replay reads both.)
 */
interface TurnLine {
  increments: Map<string, SpooledIncrement>;
  tokens: [string, number][];
  written: Promise<void>;
}
/** Index of the first count in a spooled increment, by side. */
const COUNTS_AT = { supply: 8, demand: 5 } as const;

/** Adds counts up per fact key and flushes them to the sink every `flushMs` and on close. */
export class FactAggregator {
  private pending = new Map<string, Entry>();
  private pendingTokens: CountedBillingToken[] = [];
  /** The spool line events of this turn join; sealed when the spool writes it or a flush takes a checkpoint. */
  private turnLine: TurnLine | undefined;
  private readonly sink: FactSink;
  private readonly spool: Spool | undefined;
  /** The spool's checkpoint name in the store: one per spool, so exchange nodes sharing a store keep their own. */
  readonly checkpointName: string | undefined;
  private readonly logger: EventLogger;
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<number> | undefined;
  private closed = false;
  private counters = { events: 0, flushes: 0, factsWritten: 0, failedFlushes: 0, factsDropped: 0 };
  /** When the oldest count not yet in the store was added (epoch ms): pending, or in a flush under way. */
  private unflushedSince: number | undefined;
  private inFlightSince: number | undefined;
  /** Spool lines appended when the last successful flush took its checkpoint: the store holds their counts. */
  private coveredAppended = 0;

  constructor(options: FactAggregatorOptions) {
    this.sink = options.sink;
    this.spool = options.spool;
    this.checkpointName = options.spool ? `exchange:${options.spool.nodeId}` : undefined;
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

  /**
   * Records one event: its increments join the aggregate and, with a spool, the line of this
   * turn. The promise settles when that line is written (on disk with `sync`); without a spool
   * it is already resolved. It rejects when the spool fails (the counts stay aggregated).
   */
  record(increments: readonly FactIncrement[], event: EventOptions = {}): Promise<void> {
    this.counters.events++;
    for (const increment of increments) this.add(increment.id, increment.side, increment.key, increment.counts);
    if (event.billingToken) this.pendingTokens.push(event.billingToken);
    if (this.spool === undefined) return done;
    const line = (this.turnLine ??= this.openTurnLine(this.spool));
    for (const increment of increments) {
      const counts = increment.counts;
      let spooledIncrement = line.increments.get(increment.id);
      if (spooledIncrement === undefined) line.increments.set(increment.id, (spooledIncrement = spooled(increment)));
      else {
        const at = COUNTS_AT[increment.side];
        (spooledIncrement[at] as number) += counts.request ?? 0;
        (spooledIncrement[at + 1] as number) += counts.response ?? 0;
        (spooledIncrement[at + 2] as number) += counts.impression ?? 0;
        (spooledIncrement[at + 3] as number) += counts.cpmMicros ?? 0;
      }
    }
    if (event.billingToken) line.tokens.push([event.billingToken.id, event.billingToken.expiresAt]);
    // A sync event also waits for its own line: durable() alone would not see a line the spool refused.
    return event.sync === true ? Promise.all([line.written, this.spool.durable()]).then(noop) : line.written;
  }

  /** Appends the turn's line to the spool; it is built, and sealed, when the spool writes it. */
  private openTurnLine(spool: Spool): TurnLine {
    const line: TurnLine = { increments: new Map(), tokens: [], written: done };
    const seal = () => {
      if (this.turnLine === line) this.turnLine = undefined;
    };
    line.written = spool.append(
      new LineBuilder(() => {
        seal();
        return line.tokens.length > 0 ? { f: [...line.increments.values()], ts: line.tokens } : { f: [...line.increments.values()] };
      }),
    );
    // A line the spool refused is never written: the next event starts another (the refusal reaches every caller of this one).
    line.written.catch(seal);
    return line;
  }

  /**
   * Adds a spool line read back after a crash to the aggregate (not to the spool again).
   * Returns its billing tokens; throws a TypeError for a line of another shape.
   */
  replay(line: unknown): CountedBillingToken[] {
    const { f, t, ts } = (line ?? {}) as { f?: unknown; t?: unknown; ts?: unknown };
    if (!Array.isArray(f)) throw new TypeError("spool line without increments");
    const pairs = ts !== undefined ? ts : t !== undefined ? [t] : [];
    if (!Array.isArray(pairs) || !pairs.every((p) => Array.isArray(p) && typeof p[0] === "string" && typeof p[1] === "number")) {
      throw new TypeError("spool line with a malformed billing token");
    }
    const increments = f.map(unspooled);
    for (const increment of increments) {
      const id = increment.side === "supply" ? this.supplyId(increment.key) : this.demandId(increment.key);
      this.add(id, increment.side, increment.key, increment.counts);
    }
    const tokens = (pairs as [string, number][]).map(([id, expiresAt]) => ({ id, expiresAt }));
    this.pendingTokens.push(...tokens);
    return tokens;
  }

  private add(id: string, side: Entry["side"], key: SupplyKey | DemandKey, counts: FactCounts): void {
    this.unflushedSince ??= Date.now();
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
    const tokens = this.pendingTokens;
    // Every spool line before this position has its counts in `batch`: it is what the store will
    // cover. The turn's line is among them, so later events of this turn start a new one.
    this.turnLine = undefined;
    const position = this.spool?.position;
    const appended = this.spool?.stats().appended;
    this.pending = new Map();
    this.pendingTokens = [];
    this.inFlightSince = this.unflushedSince;
    this.unflushedSince = undefined;
    this.flushing = this.write(batch, tokens, position, appended).finally(() => {
      this.flushing = undefined;
      this.inFlightSince = undefined;
    });
    return this.flushing;
  }

  private async write(batch: Map<string, Entry>, tokens: CountedBillingToken[], position: SpoolPosition | undefined, appended: number | undefined): Promise<number> {
    const ids = [...batch.keys()];
    let facts = ids.map((id) => toFact(batch.get(id)!));
    const options: IngestOptions = {};
    if (position !== undefined) options.checkpoint = { name: this.checkpointName!, position: formatPosition(position) };
    if (tokens.length > 0) options.billingTokens = tokens;
    // The store loads all or nothing; a fact it refuses is dropped (and logged) so the rest still loads.
    for (let attempt = 0; attempt <= facts.length; attempt++) {
      try {
        const written = await this.sink.ingest(facts, options);
        this.counters.flushes++;
        this.counters.factsWritten += written;
        if (position !== undefined) this.spool!.release(position);
        if (appended !== undefined) this.coveredAppended = appended;
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
        // Put the batch back: its counts add to what arrived meanwhile and go out with the next flush
        // (whose checkpoint is later, so it covers this batch's spool lines too).
        this.logger.warn({ err: error, facts: facts.length }, "report store failed; facts kept for the next flush");
        // Still unflushed: the lag counts from the oldest of them.
        this.unflushedSince = Math.min(this.inFlightSince ?? Date.now(), this.unflushedSince ?? Date.now());
        this.inFlightSince = undefined;
        for (const id of ids) {
          const entry = batch.get(id)!;
          this.add(id, entry.side, entry.key, entry);
        }
        this.pendingTokens.unshift(...tokens);
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

  /**
   * Counters (events recorded, flushes, facts written, failed and dropped), how many keys wait for
   * the next flush, the flush lag (how long the oldest count not in the store has waited, 0 when
   * none waits) and the spool backlog (spool lines whose counts the store does not hold yet).
   */
  stats(): { pendingKeys: number; events: number; flushes: number; factsWritten: number; failedFlushes: number; factsDropped: number; lagMs: number; spoolBacklog: number } {
    const oldest = Math.min(this.inFlightSince ?? Infinity, this.unflushedSince ?? Infinity);
    const lagMs = oldest === Infinity ? 0 : Math.max(0, Date.now() - oldest);
    const spoolBacklog = this.spool === undefined ? 0 : this.spool.stats().appended - this.coveredAppended;
    return { pendingKeys: this.pending.size, ...this.counters, lagMs, spoolBacklog };
  }
}

/**
 * Why the report store would refuse the fact an increment makes, or undefined when it would
 * keep it: the store's own rule (store/fact.ts), applied before an event is acknowledged.
 */
export function storeRefusal(side: "supply" | "demand", key: SupplyKey | DemandKey, counts: FactCounts): string | undefined {
  return factProblem(toFact({ key, side, request: counts.request ?? 0, response: counts.response ?? 0, impression: counts.impression ?? 0, cpmMicros: counts.cpmMicros ?? 0 }));
}

function spooled(increment: FactIncrement): SpooledIncrement {
  const c = increment.counts;
  const counts = [c.request ?? 0, c.response ?? 0, c.impression ?? 0, c.cpmMicros ?? 0];
  if (increment.side === "supply") {
    const k = increment.key;
    return ["s", k.date_hour, k.publisher_id, k.app_bundle_id, k.placement_id, k.ad_format, k.platform, k.country, ...counts];
  }
  const k = increment.key;
  return ["d", k.date_hour, k.bidder_id, k.ad_format, k.platform, ...counts];
}

const isText = (v: unknown): v is string => typeof v === "string";
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

type Unspooled = { side: "supply"; key: SupplyKey; counts: FactCounts } | { side: "demand"; key: DemandKey; counts: FactCounts };

function unspooled(item: unknown): Unspooled {
  const a = item as unknown[];
  if (Array.isArray(a) && a[0] === "s" && a.length === 12 && [1, 2, 3, 4, 7].every((i) => isText(a[i])) && a.slice(5, 7).every(isCount) && a.slice(8).every(isCount)) {
    const [, date_hour, publisher_id, app_bundle_id, placement_id, ad_format, platform, country, request, response, impression, cpmMicros] = a as [string, string, string, string, string, number, number, string, number, number, number, number];
    return { side: "supply", key: { date_hour, publisher_id, app_bundle_id, placement_id, ad_format, platform, country }, counts: { request, response, impression, cpmMicros } };
  }
  if (Array.isArray(a) && a[0] === "d" && a.length === 9 && isText(a[1]) && isText(a[2]) && a.slice(3).every(isCount)) {
    const [, date_hour, bidder_id, ad_format, platform, request, response, impression, cpmMicros] = a as [string, string, string, number, number, number, number, number, number];
    return { side: "demand", key: { date_hour, bidder_id, ad_format, platform }, counts: { request, response, impression, cpmMicros } };
  }
  throw new TypeError(`spool increment of an unknown shape: ${JSON.stringify(item)?.slice(0, 200)}`);
}

function toFact(entry: Entry): Fact {
  const metrics = { request: entry.request, response: entry.response, impression: entry.impression, revenue: entry.cpmMicros / 1e9 };
  return entry.side === "supply"
    ? ({ side: "supply", ...(entry.key as SupplyKey), ...metrics } satisfies SupplyFact)
    : ({ side: "demand", ...(entry.key as DemandKey), ...metrics } satisfies DemandFact);
}
