/** The store options every command that opens the report store shares: --db, --store, --clickhouse-url. */
import type { Command } from "commander";
import { openStore } from "../store/index.js";
import type { ReportStore } from "../store/store.js";
import { UsageError } from "./errors.js";

export interface StoreCommandOptions {
  db: string;
  store?: string;
  clickhouseUrl?: string;
}

/** Adds --store and --clickhouse-url next to a command's --db. */
export function addStoreOptions(command: Command): Command {
  return command
    .option("--store <engine>", "report store: duckdb (embedded, --db) or clickhouse (--clickhouse-url)", "duckdb")
    .option("--clickhouse-url <url>", "ClickHouse HTTP address and database, e.g. http://127.0.0.1:8123/adxkit");
}

/** Opens the store the options name; a wrong engine name is a usage error (exit 2). */
export function openStoreFrom(options: StoreCommandOptions): Promise<ReportStore> {
  const engine = options.store ?? "duckdb";
  if (engine !== "duckdb" && engine !== "clickhouse") throw new UsageError(`--store must be duckdb or clickhouse (got ${engine})`);
  return openStore({ db: options.db, store: engine, clickhouseUrl: options.clickhouseUrl });
}
