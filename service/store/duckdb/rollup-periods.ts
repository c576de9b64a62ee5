/**
 * Which days and months of the rollups hold one row per key, and compacting those that do not.
 *
 * A load appends its own sums to every rollup (layout.ts, `rollupStatements`): a key holds one
 * row per load that touched its day, up to 86,400 a day from the exchange's one-second flushes,
 * so the rollups of a server grow nearly as large as its hourly facts. Each load counts, in the
 * same transaction, the loads that have written each period of its side (`rollup_periods`; one
 * load into a new period leaves it one row per key). `compactRollups` sums each period written
 * by more than one load into one row per key, in one transaction, and counts it as one load
 * again. The store keeps the periods written more than once in memory: a report reading only
 * periods of one row per key need not group what it reads (plan.ts, `rowsAreGroups`).
 *
 * A plan may skip the grouping only if no load commits rows into its periods between the plan
 * and its statement: while a load or compaction writes (`writing` … `written`), no plan skips
 * it, and a write starts only once the statements of those that do have ended (`reading`).
 */
import { DATE, VARCHAR, DuckDBDateValue, type DuckDBConnection } from "@duckdb/node-api";
import { reportModel, type ReportModelTables, type Side } from "@adxkit/bindings/reports";
import { factTables, type FactTable, type Grain } from "../plan.js";
import { batchLiteral, columnOf, TIME_COLUMN, tableOf } from "./layout.js";

const DAY_MS = 86_400_000;

/** A period written by more than one load since it was last compacted. */
export interface MixedPeriod {
  side: Side;
  grain: Grain;
  /** The day's or month's first instant (UTC ms). */
  start: number;
}

/** The side's rollup grains (day, month). */
const grainsOf = (side: Side, model: ReportModelTables) => [...new Set(factTables(model, side).filter((t) => t.grain !== "hour").map((t) => t.grain))];

/**
 * The statement, run in load `batch`'s transaction after its rollups, that counts the
 * load once for every day and month of the side it wrote.
 */
export function recordPeriodsStatement(side: Side, batch: number, model: ReportModelTables = reportModel): string {
  const periods = grainsOf(side, model).map((grain) =>
    grain === "day" ? `SELECT '${side}', 'day', day, 1 FROM days` : `SELECT DISTINCT '${side}', '${grain}', CAST(date_trunc('${grain}', day) AS DATE), 1 FROM days`,
  );
  return `INSERT INTO rollup_periods (side, grain, period, loads) WITH days AS (SELECT DISTINCT CAST(hour AS DATE) AS day FROM ${side}_hourly WHERE batch = ${batchLiteral(batch)}) ${periods.join(" UNION ALL ")} ON CONFLICT DO UPDATE SET loads = loads + 1`;
}

/** The periods written by more than one load (read in the transaction that may have made them so). */
export async function readMixedPeriods(connection: DuckDBConnection): Promise<MixedPeriod[]> {
  const reader = await connection.runAndReadAll("SELECT side, grain, CAST(epoch_ms(period) AS DOUBLE) FROM rollup_periods WHERE loads > 1 ORDER BY ALL");
  return reader.getRowsJS().map(([side, grain, start]) => ({ side: side as Side, grain: grain as Grain, start: Number(start) }));
}

/**
 * The statements that make a rollup one row per key in one period (`$1`, a DATE): its rows of
 * the period summed into a temporary table, deleted, and inserted again from it.
 */
export function compactStatements(table: FactTable, model: ReportModelTables = reportModel): string[] {
  const time = TIME_COLUMN[table.grain];
  const name = tableOf(table);
  const columns = [time, ...table.dimensions.map((d) => columnOf(d, model))];
  const sums = model.counters.map((c) => (c.type === "count" ? `CAST(SUM(${c.name}) AS BIGINT) AS ${c.name}` : `SUM(${c.name}) AS ${c.name}`));
  const all = [...columns, ...model.counters.map((c) => c.name)].join(", ");
  return [
    `CREATE OR REPLACE TEMP TABLE compact_${name} AS SELECT ${[...columns, ...sums].join(", ")} FROM ${name} WHERE ${time} = $1 GROUP BY ALL`,
    `DELETE FROM ${name} WHERE ${time} = $1`,
    `INSERT INTO ${name} (${all}) SELECT ${all} FROM compact_${name}`,
    `DROP TABLE compact_${name}`,
  ];
}

/**
 * Compacts one period of a side's rollups of its grain in one transaction, and counts it as one
 * load. The caller serialises it with the loads (duckdb/store.ts).
 */
export async function compactPeriod(connection: DuckDBConnection, period: MixedPeriod, model: ReportModelTables = reportModel): Promise<void> {
  const day = new DuckDBDateValue(Math.floor(period.start / DAY_MS));
  await connection.run("BEGIN TRANSACTION");
  try {
    for (const table of factTables(model, period.side).filter((t) => t.grain === period.grain)) {
      for (const statement of compactStatements(table, model)) await connection.run(statement, statement.includes("$1") ? [day] : [], statement.includes("$1") ? [DATE] : []);
    }
    await connection.run("UPDATE rollup_periods SET loads = 1 WHERE side = $1 AND grain = $2 AND period = $3", [period.side, period.grain, day], [VARCHAR, VARCHAR, DATE]);
    await connection.run("COMMIT");
  } catch (error) {
    await connection.run("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** The store's record of the mixed periods, and the gate between plans that trust it and writes. */
export class RollupPeriods {
  private mixed = new Map<string, Set<number>>();
  /** Writes in progress; while any, no plan skips its grouping. */
  private writes = 0;
  /** Changes at every write's start and end: a plan made under another version groups. */
  private version = 0;
  /** Statements running from plans that skip their grouping. */
  private readers = 0;
  private readonly drained: (() => void)[] = [];
  /** False until the record is read, and after a write whose outcome is unknown. */
  private known = false;

  /** The record as `periods` says (read at open, or in a write's transaction). */
  set(periods: readonly MixedPeriod[]): void {
    this.mixed = new Map();
    for (const p of periods) {
      const key = `${p.side} ${p.grain}`;
      let starts = this.mixed.get(key);
      if (starts === undefined) this.mixed.set(key, (starts = new Set()));
      starts.add(p.start);
    }
    this.known = true;
  }

  /** The mixed periods, in order. */
  list(): MixedPeriod[] {
    return [...this.mixed].flatMap(([key, starts]) => {
      const [side, grain] = key.split(" ") as [Side, Grain];
      return [...starts].sort((a, b) => a - b).map((start) => ({ side, grain, start }));
    });
  }

  /** Whether `table` holds one row per key in every period from `from` to `to` (plan.ts `uniqueRows`). */
  readonly uniqueRows = (table: FactTable, from: number, to: number): boolean => {
    if (!this.known || this.writes > 0 || table.grain === "hour") return false;
    for (const start of this.mixed.get(`${table.side} ${table.grain}`) ?? []) if (start >= from && start <= to) return false;
    return true;
  };

  /** The version a plan is made under (`reading` takes it). */
  get current(): number {
    return this.version;
  }

  /**
   * Called, synchronously, before the statement of a plan made under `version` that skips its
   * grouping: a release function, or undefined when a write began or ended since (the plan must
   * group after all).
   */
  reading(version: number): (() => void) | undefined {
    if (version !== this.version || this.writes > 0) return undefined;
    this.readers++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.readers === 0) for (const done of this.drained.splice(0)) done();
    };
  }

  /** A write is about to start: resolves once no statement trusting the record runs. */
  async writing(): Promise<void> {
    this.writes++;
    this.version++;
    if (this.readers > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  /** The write ended: `periods` is the record it left (undefined: unknown, nothing skips its grouping until the next). */
  written(periods: readonly MixedPeriod[] | undefined): void {
    if (periods === undefined) this.known = false;
    else this.set(periods);
    this.version++;
    this.writes--;
  }
}
