/** The report store: the interface, its DuckDB implementation, fact parsing and the seed generator. */
import { DuckDBReportStore } from "./duckdb/store.js";
import type { ReportStore, StoreOptions } from "./store.js";

export type * from "./store.js";
export { FactError, StoreError, storeErrorCodes, type StoreErrorCode } from "./errors.js";
export { factProblem, parseFactLine, toFact } from "./fact.js";
export { DEFAULT_SEED_END, generateSeedFacts, seedPlan, type SeedOptions, type SeedPlan } from "./seed.js";

/** Where the commands keep the database when `--db` is not given. */
export const DEFAULT_DB_PATH = "./data/adxkit.duckdb";

/** Opens the report store: DuckDB for now (a file, its folder created, or `:memory:`), schema migrated. */
export async function openStore(options: StoreOptions): Promise<ReportStore> {
  return DuckDBReportStore.open(options.db);
}
