/**
 * A large load's tables of its own. ClickHouse has no transactions, so a load too large to hold
 * in memory streams into `load_<id>_<side>_hourly`, made `AS <side>_hourly` (same engine, key
 * and partitions, none of its materialized views); when every fact has checked out, each rollup
 * of the load is summed server-side into `load_<id>_<side>_<rollup>` (rollupSteps: the daily
 * sums from the facts, the others from the daily sums), and only then are the load's parts
 * moved into the store's tables, partition by partition, with `ATTACH PARTITION … FROM` (hard
 * links, milliseconds; it fires no view, which is why the rollups are summed here). A failed
 * load drops its tables and leaves nothing visible. Why not the views: a copy through
 * `*_hourly` re-sorts every fact and runs four views over it, 3–4× the cost (docs/benchmarks.md).
 * On a cluster, where `*_hourly` is a Distributed table (docs/clickhouse.md) that takes no
 * parts, the load's table is a plain MergeTree and is copied in, the shards' views summing it.
 */
import { reportModel, type Side } from "@adxkit/bindings/reports";
import type { FactTable, Grain } from "../plan.js";
import { rollupSteps } from "../rollup-steps.js";
import type { ClickHouseConnection } from "./connection.js";
import { quoteString } from "./sql.js";

/** A load's tables older than this are left over from a process that died mid-load: dropped. */
const STALE_MS = 24 * 3_600_000;

const TIME: Readonly<Record<Grain, string>> = { hour: "hour", day: "day", month: "month" };

/** The time of a `target` row from a `source` row's time column. */
function timeFrom(source: Grain, target: Grain): string {
  if (source === target) return TIME[target];
  return `${target === "day" ? "toDate" : "toStartOfMonth"}(${TIME[source]})`;
}

/** The store table and the load's own table of a fact table. */
const storeTable = (table: FactTable) => `${table.side}_${table.name}`;

/** The tables of one large load, named by its id (a safe integer of our own: `Date.now() × 1000 + random`). */
export class LoadTables {
  private made: string[] = [];
  /** Whether the store's tables take parts (MergeTree: one node) or only rows (a cluster's Distributed tables). */
  private moveParts = true;

  constructor(
    private readonly connection: ClickHouseConnection,
    private readonly batch: number,
  ) {}

  /** The load's own table standing for a store table. */
  name(table: FactTable | string): string {
    return `load_${this.batch}_${typeof table === "string" ? table : storeTable(table)}`;
  }

  /** Drops load tables a dead process left (older than a day), then makes this load's hourly tables. */
  async create(sides: readonly Side[]): Promise<void> {
    await this.dropStale();
    const hourly = sides.map((side) => `${side}_hourly`);
    const engines = await this.connection.rows<{ engine: string }>(
      `SELECT engine FROM system.tables WHERE database = ${quoteString(this.connection.database)} AND name IN (${hourly.map(quoteString).join(", ")})`,
    );
    this.moveParts = engines.every((t) => t.engine.endsWith("MergeTree"));
    for (const table of hourly) await this.make(table, this.moveParts ? "" : " ENGINE = MergeTree ORDER BY tuple()");
  }

  /** Makes the facts of the load (all in its tables now) visible, with their rollups: see the top of the file. */
  async publish(sides: readonly Side[]): Promise<void> {
    if (!this.moveParts) {
      for (const side of sides) await this.connection.command(`INSERT INTO ${this.connection.table(`${side}_hourly`)} SELECT * FROM ${this.connection.table(this.name(`${side}_hourly`))}`);
      return;
    }
    // Each rollup is summed as soon as its source is: both sides, and the rollups of one daily sum, at once.
    const filled = new Map<string, Promise<void>>(sides.map((side) => [`${side}_hourly`, Promise.resolve()]));
    for (const side of sides) {
      for (const { table, source } of rollupSteps(side)) filled.set(storeTable(table), filled.get(storeTable(source))!.then(() => this.sum(table, source)));
    }
    // Every statement ends before the tables are moved, or dropped after a failure.
    const failed = (await Promise.allSettled(filled.values())).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    await this.moveAll();
  }

  /** Sums the load's rows of `source` into its own table standing for the rollup `table`. */
  private async sum(table: FactTable, source: FactTable): Promise<void> {
    await this.make(storeTable(table));
    const time = TIME[table.grain];
    const dimensions = table.dimensions.join(", ");
    const columns = [time, ...table.dimensions, ...reportModel.counters.map((c) => c.name)].join(", ");
    const sums = reportModel.counters.map((c) => `sum(${c.name}) AS ${c.name}`).join(", ");
    await this.connection.command(
      `INSERT INTO ${this.connection.table(this.name(table))} (${columns})
       SELECT ${timeFrom(source.grain, table.grain)} AS ${time}, ${dimensions}, ${sums} FROM ${this.connection.table(this.name(source))} GROUP BY ${time}, ${dimensions}`,
    );
  }

  /** Moves every part of the load's tables into the store's, the facts last. */
  private async moveAll(): Promise<void> {
    const ordered = [...this.made.filter((t) => !t.endsWith("_hourly")), ...this.made.filter((t) => t.endsWith("_hourly"))];
    for (const table of ordered) {
      const own = this.name(table);
      const partitions = await this.connection.rows<{ partition_id: string }>(
        `SELECT DISTINCT partition_id FROM system.parts WHERE database = ${quoteString(this.connection.database)} AND table = ${quoteString(own)} AND active`,
      );
      for (const { partition_id } of partitions) {
        await this.connection.command(`ALTER TABLE ${this.connection.table(table)} ATTACH PARTITION ID ${quoteString(partition_id)} FROM ${this.connection.table(own)}`);
      }
    }
  }

  /** Drops the load's tables (after publishing, or when the load failed). */
  async drop(): Promise<void> {
    for (const table of this.made) await this.connection.command(`DROP TABLE IF EXISTS ${this.connection.table(this.name(table))}`).catch(() => undefined);
    this.made = [];
  }

  private async make(table: string, engine = ""): Promise<void> {
    this.made.push(table);
    await this.connection.command(`CREATE TABLE ${this.connection.table(this.name(table))} AS ${this.connection.table(table)}${engine}`);
  }

  private async dropStale(): Promise<void> {
    const tables = await this.connection.rows<{ name: string }>(
      `SELECT name FROM system.tables WHERE database = ${quoteString(this.connection.database)} AND startsWith(name, 'load_')`,
    );
    const before = (Date.now() - STALE_MS) * 1000;
    for (const { name } of tables) {
      const batch = Number(/^load_(\d+)_/.exec(name)?.[1]);
      if (batch < before) await this.connection.command(`DROP TABLE IF EXISTS ${this.connection.table(name)}`).catch(() => undefined);
    }
  }
}
