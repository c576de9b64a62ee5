/**
 * The store options every command that opens the report store shares: --db, --store,
 * --clickhouse-url (the ClickHouse password only from ADXKIT_CLICKHOUSE_PASSWORD, or the file
 * ADXKIT_CLICKHOUSE_PASSWORD_FILE names: never on a command line), and DuckDB's resources
 * --duckdb-threads and --duckdb-memory-limit (docs/reports.md).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { serveBackground, serveThreads } from "../store/duckdb/connection.js";
import { openStore } from "../store/index.js";
import type { ReportStore } from "../store/store.js";
import { UsageError } from "./errors.js";
import { addServeFlags, checkServeFlags } from "./serve-options.js";
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
  /** The background threads' nice value when serving (serve's --background-nice; default `serveBackground()`'s). */
  backgroundNice?: number;
  /** The background threads also under SCHED_IDLE when serving (serve's --background-idle). */
  backgroundIdle?: boolean;
}

/** Adds the store's flags next to a command's --db: serve's own (spec/schemas/serve-options.yaml), the same text and checks. */
export function addStoreOptions(command: Command): Command {
  return addServeFlags(command, ["store", "clickhouseUrl", "duckdbThreads", "duckdbMemoryLimit"]);
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
 * one core less than the machine has unless --duckdb-threads says otherwise, and its background
 * threads serve's --background-nice.
 */
export function openStoreFrom(options: StoreCommandOptions, { create, serving = false }: { create: boolean; serving?: boolean }): Promise<ReportStore> {
  const given = checkServeFlags({ store: options.store, clickhouseUrl: options.clickhouseUrl, duckdbThreads: options.duckdbThreads, duckdbMemoryLimit: options.duckdbMemoryLimit }, "see the command's --help");
  const engine = given.store ?? "duckdb";
  if (engine === "duckdb" && !create && options.db !== ":memory:" && !existsSync(options.db)) {
    throw new UsageError(`--db ${options.db}: no such database (this command reads one; serve, seed, ingest and accounts create make one)`);
  }
  const password = options.clickhousePassword ?? readSecret("ADXKIT_CLICKHOUSE_PASSWORD")?.value;
  const clickhouseUrl = given.clickhouseUrl === undefined ? undefined : withPassword(given.clickhouseUrl, password);
  const threads = given.duckdbThreads ?? (serving ? serveThreads() : undefined);
  const defaults = serveBackground();
  const background = serving ? { nice: options.backgroundNice ?? defaults.nice, idle: options.backgroundIdle ?? defaults.idle } : undefined;
  return openStore({ db: options.db, store: engine, clickhouseUrl, duckdbThreads: threads, duckdbMemoryLimit: given.duckdbMemoryLimit, background });
}
