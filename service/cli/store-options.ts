/**
 * The store options every command that opens the report store shares: --db, --store,
 * --clickhouse-url (the ClickHouse password only from ADXKIT_CLICKHOUSE_PASSWORD, or the file
 * ADXKIT_CLICKHOUSE_PASSWORD_FILE names: never on a command line), and DuckDB's resources
 * --duckdb-threads and --duckdb-memory-limit (docs/reports.md).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { serveThreads } from "../store/duckdb/connection.js";
import { openStore } from "../store/index.js";
import type { ReportStore } from "../store/store.js";
import { UsageError } from "./errors.js";
import { readSecret } from "../secrets.js";

export interface StoreCommandOptions {
  db: string;
  store?: string;
  clickhouseUrl?: string;
  /** Default: ADXKIT_CLICKHOUSE_PASSWORD (or its _FILE). */
  clickhousePassword?: string;
  /** DuckDB's worker threads (a flag's text, or serve's number). */
  duckdbThreads?: string | number;
  duckdbMemoryLimit?: string;
}

/** Adds --store and --clickhouse-url next to a command's --db. */
export function addStoreOptions(command: Command): Command {
  return command
    .option("--store <engine>", "report store: duckdb (embedded, --db) or clickhouse (--clickhouse-url)", "duckdb")
    .option("--clickhouse-url <url>", "ClickHouse HTTP address and database, e.g. http://127.0.0.1:8123/adxkit (password: ADXKIT_CLICKHOUSE_PASSWORD)")
    .option("--duckdb-threads <n>", "DuckDB worker threads (default: every core; serve and demo leave one to the event loop)")
    .option("--duckdb-memory-limit <size>", "DuckDB memory limit, e.g. 2GB (default DuckDB's own, 80% of RAM; larger work spills to disk)");
}

/** The ClickHouse address with the password of the environment, when it has none of its own. */
function withPassword(url: string, password: string | undefined): string {
  if (password === undefined) return url;
  const parsed = new URL(url);
  if (parsed.password !== "") return url;
  if (parsed.username === "") parsed.username = "default";
  parsed.password = password;
  return parsed.href;
}

/**
 * What a spool records as its database: the absolute path of the DuckDB file, or the ClickHouse
 * address without its credentials; undefined for `:memory:`.
 */
export function storeIdentity(options: Pick<StoreCommandOptions, "db" | "store" | "clickhouseUrl">): string | undefined {
  if ((options.store ?? "duckdb") === "clickhouse" && options.clickhouseUrl) {
    const url = new URL(options.clickhouseUrl);
    url.username = "";
    url.password = "";
    return url.href;
  }
  return options.db === ":memory:" ? undefined : resolve(options.db);
}

/**
 * Opens the store the options name; a wrong engine name or DuckDB resource is a usage error (exit
 * 2). A command that only reads (`create: false`) refuses a DuckDB file that does not exist,
 * instead of creating an empty one (and its folders) and reporting nothing. `serving`: DuckDB gets
 * one core less than the machine has unless --duckdb-threads says otherwise.
 */
export function openStoreFrom(options: StoreCommandOptions, { create, serving = false }: { create: boolean; serving?: boolean }): Promise<ReportStore> {
  const engine = options.store ?? "duckdb";
  if (engine !== "duckdb" && engine !== "clickhouse") throw new UsageError(`--store must be duckdb or clickhouse (got ${engine})`);
  if (engine === "duckdb" && !create && options.db !== ":memory:" && !existsSync(options.db)) {
    throw new UsageError(`--db ${options.db}: no such database (this command reads one; serve, seed, ingest and accounts create make one)`);
  }
  const password = options.clickhousePassword ?? readSecret("ADXKIT_CLICKHOUSE_PASSWORD")?.value;
  const clickhouseUrl = options.clickhouseUrl === undefined ? undefined : withPassword(options.clickhouseUrl, password);
  const threads = options.duckdbThreads === undefined ? (serving ? serveThreads() : undefined) : Number(options.duckdbThreads);
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1 || threads > 1024)) throw new UsageError(`--duckdb-threads must be an integer from 1 to 1024 (got ${options.duckdbThreads})`);
  const memory = options.duckdbMemoryLimit;
  if (memory !== undefined && !/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(memory)) throw new UsageError(`--duckdb-memory-limit must be a size such as 512MB or 2GB (got ${memory})`);
  return openStore({ db: options.db, store: engine, clickhouseUrl, duckdbThreads: threads, duckdbMemoryLimit: memory });
}
