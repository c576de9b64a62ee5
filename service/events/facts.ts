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
 *
 * A store that counts billed impressions once itself (`countsBilledOnce`: ClickHouse, shared by
 * several nodes) gets each billed impression apart, with its token id, instead of summed into
 * the aggregate: a repeat given by another node then collapses in the store.
 */
import { auctionRules } from "@adxkit/bindings";
import { factProblem } from "../store/fact.js";
import {
  FACT_KEY_VERSION,
  INCREMENT_COUNTS_AT,
  decodeIncrement,
  keyVersionProblem,
  demandKeyId,
  encodeDemandIncrement,
  encodeSupplyIncrement,
  reportModel,
  supplyKeyId,
  type Counter,
  type DemandKey,
  type IncrementCounts,
  type SupplyKey,
} from "@adxkit/bindings/reports";
import type { BilledImpression, CountedBillingToken, DemandFact, Fact, IngestOptions, ReportStore, SupplyFact } from "../store/store.js";
import { formatPosition, LineBuilder, type Spool, type SpoolPosition } from "./spool.js";

export type { CountedBillingToken, DemandFact, DemandKey, Fact, SupplyFact, SupplyKey };

/** Where facts go: the report store, or anything with its `ingest` (a spool needs `recoveryState` too). */
export type FactSink = Pick<ReportStore, "ingest"> & Partial<Pick<ReportStore, "recoveryState" | "countsBilledOnce">>;

/**
 * A spool line of a fact-key version newer than this adxkit reads (it was written by a newer
 * one): replaying it would lose its counts, so the exchange refuses to start instead.
 */
export class SpoolVersionError extends Error {
  override readonly name = "SpoolVersionError";
  readonly code = "ADX_ERR_SPOOL_VERSION_NEWER";
}

/**
 * Counts to add to one key, by counter (spec/report-model.yaml). Money is in integer
 * nano-dollars, so sums stay exact: an impression cleared at a CPM of p micro-units adds p.
 */
export type FactCounts = IncrementCounts;

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
  /** The counters' sums, in the model's order. */
  counts: number[];
}

const COUNTERS: readonly Counter[] = reportModel.counters.map((c) => c.name);
/** Money leaves the aggregate in USD: nano-dollars / 1e9. */
const UNIT = reportModel.counters.map((c) => (c.type === "money" ? 1e9 : 1));

export interface FactAggregatorOptions {
  sink: FactSink;
  /** Flush period in milliseconds (default the spec's flush-ms, 1000). */
  flushMs?: number;
  logger?: EventLogger;
  /** A started spool: every event is appended to it, and each flush records its checkpoint. */
  spool?: Spool;
}

const noop = () => {};
const silent: EventLogger = { info: noop, warn: noop, error: noop };
const done = Promise.resolve();

/** A spool line's increment: the fact-key codec's tuple, [side letter, ...key, ...counts] (generated/reports/facts.ts). */
type SpooledIncrement = (string | number)[];

/**
 * The spool line of the current turn, until the spool writes it: `v` the fact-key version of its
 * increments, `f` the increments of its events summed per aggregate id, `ts` their billing tokens
 * as [id, expiresAt], `b` the billed impressions kept apart for a store that counts them once
 * (`countsBilledOnce`) as [id, expiresAt, ...increments]. (Lines of earlier versions had no `v`, meaning version 1, and held one event
 * each, its token as `t`; replay reads them all.)
 */
interface TurnLine {
  increments: Map<string, SpooledIncrement>;
  tokens: [string, number][];
  billed: [string, number, ...SpooledIncrement[]][];
  written: Promise<void>;
}

/** Adds counts up per fact key and flushes them to the sink every `flushMs` and on close. */
export class FactAggregator {
  private pending = new Map<string, Entry>();
  private pendingTokens: CountedBillingToken[] = [];
  /** Billed impressions kept apart (the sink `countsBilledOnce`), for the next flush. */
  private pendingBilled: BilledImpression[] = [];
  /** The sink counts billed impressions once per token: they go to it apart from the aggregate. */
  private readonly billedApart: boolean;
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
    this.billedApart = options.sink.countsBilledOnce === true;
    this.spool = options.spool;
    this.checkpointName = options.spool ? `exchange:${options.spool.nodeId}` : undefined;
    this.logger = options.logger ?? silent;
    this.timer = setInterval(() => void this.flush(), options.flushMs ?? auctionRules.flushMs);
    this.timer.unref();
  }

  /** The aggregate's id of a supply key (pass it back to `supply` when adding to the same key again). */
  supplyId(key: SupplyKey): string {
    return supplyKeyId(key);
  }

  /** The aggregate's id of a demand key. */
  demandId(key: DemandKey): string {
    return demandKeyId(key);
  }

  /**
   * Records one event: its increments join the aggregate and, with a spool, the line of this
   * turn. The promise settles when that line is written (on disk with `sync`); without a spool
   * it is already resolved. It rejects when the spool fails (the counts stay aggregated).
   */
  record(increments: readonly FactIncrement[], event: EventOptions = {}): Promise<void> {
    this.counters.events++;
    const apart = this.billedApart && event.billingToken !== undefined;
    if (apart) this.addBilled(event.billingToken!, increments);
    else {
      for (const increment of increments) this.add(increment.id, increment.side, increment.key, increment.counts);
      if (event.billingToken) this.pendingTokens.push(event.billingToken);
    }
    if (this.spool === undefined) return done;
    const line = (this.turnLine ??= this.openTurnLine(this.spool));
    if (apart) line.billed.push([event.billingToken!.id, event.billingToken!.expiresAt, ...increments.map(spooled)]);
    else this.spoolIncrements(line, increments, event.billingToken);
    // A sync event also waits for its own line: durable() alone would not see a line the spool refused.
    return event.sync === true ? Promise.all([line.written, this.spool.durable()]).then(noop) : line.written;
  }

  /** Adds the increments to the turn's line, summed per aggregate id, and lists the token. */
  private spoolIncrements(line: TurnLine, increments: readonly FactIncrement[], billingToken: CountedBillingToken | undefined): void {
    for (const increment of increments) {
      const counts = increment.counts;
      let spooledIncrement = line.increments.get(increment.id);
      if (spooledIncrement === undefined) line.increments.set(increment.id, (spooledIncrement = spooled(increment)));
      else {
        const at = INCREMENT_COUNTS_AT[increment.side];
        for (let i = 0; i < COUNTERS.length; i++) (spooledIncrement[at + i] as number) += counts[COUNTERS[i]] ?? 0;
      }
    }
    if (billingToken) line.tokens.push([billingToken.id, billingToken.expiresAt]);
  }

  /** Keeps a billed impression apart from the aggregate, as the facts of its token. */
  private addBilled(token: CountedBillingToken, increments: readonly FactIncrement[]): void {
    this.unflushedSince ??= Date.now();
    const facts = increments.map((i) => toFact({ key: i.key, side: i.side, counts: COUNTERS.map((c) => i.counts[c] ?? 0) }));
    this.pendingBilled.push({ id: token.id, expiresAt: token.expiresAt, facts });
  }

  /** Appends the turn's line to the spool; it is built, and sealed, when the spool writes it. */
  private openTurnLine(spool: Spool): TurnLine {
    const line: TurnLine = { increments: new Map(), tokens: [], billed: [], written: done };
    const seal = () => {
      if (this.turnLine === line) this.turnLine = undefined;
    };
    line.written = spool.append(
      new LineBuilder(() => {
        seal();
        const f = [...line.increments.values()];
        return {
          v: FACT_KEY_VERSION,
          f,
          ...(line.tokens.length > 0 ? { ts: line.tokens } : {}),
          ...(line.billed.length > 0 ? { b: line.billed } : {}),
        };
      }),
    );
    // A line the spool refused is never written: the next event starts another (the refusal reaches every caller of this one).
    line.written.catch(seal);
    return line;
  }

  /**
   * Adds a spool line read back after a crash to the aggregate (not to the spool again).
   * Returns its billing tokens; throws a TypeError for a line of another shape, or of a fact-key
   * version newer than this adxkit reads (saying so).
   */
  replay(line: unknown): CountedBillingToken[] {
    const { v, f, t, ts, b } = (line ?? {}) as { v?: unknown; f?: unknown; t?: unknown; ts?: unknown; b?: unknown };
    if (!Array.isArray(f)) throw new TypeError("spool line without increments");
    // Lines written before the key had versions are version 1.
    const version = v === undefined ? 1 : (v as number);
    if (typeof version === "number" && version > FACT_KEY_VERSION) throw new SpoolVersionError(keyVersionProblem(version)!);
    const pairs = ts !== undefined ? ts : t !== undefined ? [t] : [];
    if (!Array.isArray(pairs) || !pairs.every((p) => Array.isArray(p) && typeof p[0] === "string" && typeof p[1] === "number")) {
      throw new TypeError("spool line with a malformed billing token");
    }
    const billed = b === undefined ? [] : b;
    if (!Array.isArray(billed) || !billed.every((e) => Array.isArray(e) && typeof e[0] === "string" && typeof e[1] === "number")) {
      throw new TypeError("spool line with a malformed billed impression");
    }
    const increments = f.map((item) => decodeIncrement(item, version)).map((increment) => this.withId(increment));
    // Decoded whole before anything is added: a malformed line adds nothing.
    const billedIncrements = (billed as [string, number, ...unknown[]][]).map(([id, expiresAt, ...items]) => ({
      token: { id, expiresAt },
      increments: items.map((item) => this.withId(decodeIncrement(item, version))),
    }));
    for (const increment of increments) this.add(increment.id, increment.side, increment.key, increment.counts);
    const tokens = (pairs as [string, number][]).map(([id, expiresAt]) => ({ id, expiresAt }));
    this.pendingTokens.push(...tokens);
    for (const { token, increments: items } of billedIncrements) {
      // A line written for a store that counts billed impressions once, replayed for one that does not: counted as before.
      if (this.billedApart) this.addBilled(token, items);
      else {
        for (const increment of items) this.add(increment.id, increment.side, increment.key, increment.counts);
        this.pendingTokens.push(token);
      }
      tokens.push(token);
    }
    return tokens;
  }

  /** A decoded increment with its aggregate id. */
  private withId(increment: ReturnType<typeof decodeIncrement>): FactIncrement {
    const id = increment.side === "supply" ? this.supplyId(increment.key) : this.demandId(increment.key);
    return { ...increment, id } as FactIncrement;
  }

  private add(id: string, side: Entry["side"], key: SupplyKey | DemandKey, counts: FactCounts): void {
    this.unflushedSince ??= Date.now();
    let entry = this.pending.get(id);
    if (entry === undefined) {
      entry = { key: { ...key }, side, counts: COUNTERS.map(() => 0) };
      this.pending.set(id, entry);
    }
    for (let i = 0; i < COUNTERS.length; i++) entry.counts[i] += counts[COUNTERS[i]] ?? 0;
  }

  /**
   * Hands everything pending to the sink; returns how many facts it loaded. One flush at a
   * time: a call during a flush waits for it and then flushes what came in meanwhile.
   */
  async flush(): Promise<number> {
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0 && this.pendingBilled.length === 0) return 0;
    const batch = this.pending;
    const tokens = this.pendingTokens;
    const billed = this.pendingBilled;
    // Every spool line before this position has its counts in `batch`: it is what the store will
    // cover. The turn's line is among them, so later events of this turn start a new one.
    this.turnLine = undefined;
    const position = this.spool?.position;
    const appended = this.spool?.stats().appended;
    this.pending = new Map();
    this.pendingTokens = [];
    this.pendingBilled = [];
    this.inFlightSince = this.unflushedSince;
    this.unflushedSince = undefined;
    this.flushing = this.write(batch, tokens, billed, position, appended).finally(() => {
      this.flushing = undefined;
      this.inFlightSince = undefined;
    });
    return this.flushing;
  }

  private async write(batch: Map<string, Entry>, tokens: CountedBillingToken[], billed: BilledImpression[], position: SpoolPosition | undefined, appended: number | undefined): Promise<number> {
    const ids = [...batch.keys()];
    let facts = ids.map((id) => toFact(batch.get(id)!));
    const options: IngestOptions = {};
    if (position !== undefined) options.checkpoint = { name: this.checkpointName!, position: formatPosition(position) };
    if (tokens.length > 0) options.billingTokens = tokens;
    if (billed.length > 0) options.billed = billed;
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
          if (facts.length === 0 && billed.length === 0) return 0;
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
          this.add(id, entry.side, entry.key, Object.fromEntries(COUNTERS.map((c, i) => [c, entry.counts[i]])));
        }
        this.pendingTokens.unshift(...tokens);
        this.pendingBilled.unshift(...billed);
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
  return factProblem(toFact({ key, side, counts: COUNTERS.map((c) => counts[c] ?? 0) }));
}

function spooled(increment: FactIncrement): SpooledIncrement {
  return increment.side === "supply" ? encodeSupplyIncrement(increment.key, increment.counts) : encodeDemandIncrement(increment.key, increment.counts);
}

function toFact(entry: Entry): Fact {
  const counts = Object.fromEntries(COUNTERS.map((c, i) => [c, entry.counts[i] / UNIT[i]])) as Record<Counter, number>;
  return { side: entry.side, ...entry.key, ...counts } as Fact;
}
