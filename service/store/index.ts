/** The report store: the interface, its DuckDB implementation, fact parsing and the seed generator. */
import { DuckDBReportStore } from "./duckdb/store.js";
import type { ReportStore, StoreOptions } from "./store.js";

export type * from "./store.js";
export { FactError, StoreError, storeErrorCodes, type StoreErrorCode } from "./errors.js";
export { factProblem, parseFactLine, toFact } from "./fact.js";
export { factsOf, PROGRESS_EVERY, type FactInput, type FactSource, type FactSourceHooks } from "./fact-source.js";
export { DEFAULT_SEED_END, generateSeedFacts, seedPlan, type SeedOptions, type SeedPlan } from "./seed.js";

/** Where the commands keep the database when `--db` is not given. */
export const DEFAULT_DB_PATH = "./data/adxkit.duckdb";

/** Options of `openStore`: the DuckDB file, or which engine and where its server is. */
export interface OpenStoreOptions extends Partial<StoreOptions> {
  /** The engine: `duckdb` (default, embedded, `db`) or `clickhouse` (a server at `clickhouseUrl`). */
  store?: "duckdb" | "clickhouse";
  /** `http://user:password@host:8123/database` (docs/clickhouse.md); default http://127.0.0.1:18123, database `adxkit`. */
  clickhouseUrl?: string;
}

/**
 * Opens the report store, schema migrated: DuckDB (a file, its folder created, or `:memory:`;
 * `DEFAULT_DB_PATH` when `db` is not given), or with `store: "clickhouse"` a ClickHouse server.
 * The ClickHouse code (and @clickhouse/client) loads only when asked for.
 */
export async function openStore(options: OpenStoreOptions): Promise<ReportStore> {
  if (options.store === "clickhouse") {
    const { ClickHouseReportStore } = await import("./clickhouse/store.js");
    return ClickHouseReportStore.open({ url: options.clickhouseUrl, rollups: options.rollups });
  }
  if (options.store !== undefined && options.store !== "duckdb") throw new TypeError(`unknown store ${JSON.stringify(options.store)} (duckdb or clickhouse)`);
  return DuckDBReportStore.open(options.db ?? DEFAULT_DB_PATH, { rollups: options.rollups, threads: options.duckdbThreads, memoryLimit: options.duckdbMemoryLimit, background: options.background });
}
