/**
 * Report statements planned once with their values as literals, kept per connection until the
 * store's next load. DuckDB binds and plans a prepared statement again at every run once values
 * are bound (statements.ts): ~0.6–0.8 ms of the month total's ~1.1–1.4 ms of DuckDB, ~1 ms of the
 * month by date × country's ~2.5 ms (docs/benchmarks.md, "The read side, part ten"). A plan made
 * with literals runs without that, but DuckDB prunes it by the table statistics of the moment it
 * was made (a filter outside a column's min/max becomes an empty scan; part six, upstream
 * duckdb/duckdb#23704), so it is valid only until the data changes. One process holds the file
 * and every load passes through the store (connection.ts, store.ts), so the store tells this
 * cache: `writing` before a load (no plan made or run from here until it ends, those running
 * finish first, so none reads the load's rows with statistics from before it), `written` after
 * (every plan made before is made again at its next use). Meanwhile reports bind their values
 * as before. Only integers, dates and timestamps become literals (a value of any other form
 * keeps the bound path), and the text is the SQL's own with each `$n` replaced.
 *
 * Made again at its next use, a plan cost that report what binding its values did: a month total
 * 1.0–1.3 ms instead of 0.4–0.7, a month by date × country 2.6–4.1 instead of 1.1–1.7 ms (part
 * eleven), which a server flushing the exchange's facts each second paid in most small reports.
 * So after a load the store has the plans run since the load before made again at once
 * (`refresh`, on the connection the pool gives: the pool hands out the connection given back
 * last, which the next report most likely gets too), at most `REFRESHED_AFTER_LOAD` of them.
 */
import { DuckDBDateValue, DuckDBTimestampValue, DuckDBTypeId, type DuckDBConnection, type DuckDBMaterializedResult, type DuckDBPreparedStatement, type DuckDBType, type DuckDBValue } from "@duckdb/node-api";
import { MAX_PREPARED_PER_CONNECTION } from "./statements.js";

const DAY_MS = 86_400_000;
/** The largest time a JS Date holds, in ms either side of the epoch. */
const MAX_DATE_MS = 8.64e15;

/** ISO text of `ms` when its year has four digits (what DuckDB's DATE and TIMESTAMP literals read), else undefined. */
function isoOf(ms: number): string | undefined {
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_DATE_MS) return undefined;
  const iso = new Date(ms).toISOString();
  return /^\d{4}-/.test(iso) ? iso : undefined;
}

/** A value as a SQL literal of its bound type, or undefined when it has no literal form here. */
export function literalOf(value: DuckDBValue, type: DuckDBType): string | undefined {
  switch (type.typeId) {
    case DuckDBTypeId.INTEGER:
      return typeof value === "number" && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 ? String(value) : undefined;
    case DuckDBTypeId.DATE: {
      const iso = value instanceof DuckDBDateValue && Number.isInteger(value.days) ? isoOf(value.days * DAY_MS) : undefined;
      return iso === undefined ? undefined : `DATE '${iso.slice(0, 10)}'`;
    }
    case DuckDBTypeId.TIMESTAMP: {
      const iso = value instanceof DuckDBTimestampValue && value.micros % 1000n === 0n ? isoOf(Number(value.micros / 1000n)) : undefined;
      return iso === undefined ? undefined : `TIMESTAMP '${iso.slice(0, 10)} ${iso.slice(11, 23)}'`;
    }
    default:
      return undefined;
  }
}

/** `sql` with each `$n` replaced by the literal of `values[n - 1]`, or undefined when one has none. */
export function withLiterals(sql: string, values: readonly DuckDBValue[], types: readonly DuckDBType[]): string | undefined {
  let missing = false;
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    const literal = i < values.length ? literalOf(values[i], types[i]) : undefined;
    if (literal === undefined) missing = true;
    return literal ?? "";
  });
  return missing ? undefined : text;
}

/** Plans made again after a load, at most: the texts run most recently before it. */
export const REFRESHED_AFTER_LOAD = 16;

interface Plan {
  statement: DuckDBPreparedStatement;
  /** The store's load count when it was made. */
  generation: number;
}

/** The store's plans made with literals (see the file's comment). */
export class FixedPlans {
  private readonly plans = new WeakMap<DuckDBConnection, Map<string, Plan>>();
  /** Loads ended so far: a plan made before the last one is made again. */
  private generation = 0;
  /** Loads in progress (one at a time in practice). */
  private writes = 0;
  /** Statements being planned or run from here. */
  private running = 0;
  private readonly drained: (() => void)[] = [];
  /** The texts run since the last load ended, the latest last (at most REFRESHED_AFTER_LOAD). */
  private readonly used = new Set<string>();
  /** The texts to make again after the last load (`refresh`). */
  private stale: string[] = [];

  /** `enabled` false: every report binds its values (what tests compare against). */
  constructor(private readonly enabled = true) {}

  /**
   * Runs `sql` on `connection` from a plan made with `values` as literals; undefined, running
   * nothing, while a load is in progress or when a value has no literal: the caller binds them.
   */
  async run(connection: DuckDBConnection, sql: string, values: readonly DuckDBValue[], types: readonly DuckDBType[]): Promise<DuckDBMaterializedResult | undefined> {
    if (!this.enabled || this.writes > 0) return undefined;
    const text = withLiterals(sql, values, types);
    if (text === undefined) return undefined;
    this.running++;
    try {
      this.used.delete(text);
      this.used.add(text);
      if (this.used.size > REFRESHED_AFTER_LOAD) this.used.delete(this.used.values().next().value!);
      return await (await this.planOf(connection, text)).statement.run();
    } finally {
      this.ran();
    }
  }

  /** The connection's plan of `text`, made (again) unless made since the last load; last in the order of use. */
  private async planOf(connection: DuckDBConnection, text: string): Promise<Plan> {
    let plans = this.plans.get(connection);
    if (plans === undefined) this.plans.set(connection, (plans = new Map()));
    let plan = plans.get(text);
    if (plan !== undefined) plans.delete(text);
    if (plan === undefined || plan.generation !== this.generation) {
      plan?.statement.destroySync();
      const generation = this.generation;
      plan = { statement: await connection.prepare(text), generation };
      if (plans.size >= MAX_PREPARED_PER_CONNECTION) {
        const [oldest, evicted] = plans.entries().next().value!;
        plans.delete(oldest);
        evicted.statement.destroySync();
      }
    }
    // Re-inserted: the Map's order is the order of last use.
    plans.set(text, plan);
    return plan;
  }

  private ran(): void {
    if (--this.running === 0) for (const done of this.drained.splice(0)) done();
  }

  /** Whether plans run before the last load wait to be made again (`refresh`). */
  get refreshDue(): boolean {
    return this.enabled && this.stale.length > 0;
  }

  /**
   * Makes again on `connection` the plans run before the last load (at most REFRESHED_AFTER_LOAD),
   * so that the next reports of those texts run without planning; stops when a load begins.
   */
  async refresh(connection: DuckDBConnection): Promise<number> {
    const texts = this.stale;
    this.stale = [];
    let made = 0;
    for (const text of texts) {
      if (this.writes > 0) break;
      this.running++;
      try {
        const generation = this.generation;
        const plan = await this.planOf(connection, text);
        if (plan.generation === generation) made++;
      } finally {
        this.ran();
      }
    }
    return made;
  }

  /** A load is about to write: nothing is planned or run from here until `written`; resolves once those running have finished. */
  async writing(): Promise<void> {
    this.writes++;
    if (this.running > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  /** The load ended (committed or not): plans made before it are made again at their next use. */
  written(): void {
    this.generation++;
    this.writes--;
    // The texts run since the load before, the latest first, for `refresh`.
    this.stale = [...this.used].reverse().slice(0, REFRESHED_AFTER_LOAD);
    this.used.clear();
  }
}
