/**
 * The connection to ClickHouse: one @clickhouse/client (HTTP, pooled sockets), the server's
 * version and whether it binds query parameters, the migrations, and the bookkeeping that lets
 * `close` wait for running calls.
 */
import type { Readable } from "node:stream";
import { createClient, ClickHouseLogLevel, type ClickHouseClient } from "@clickhouse/client";
import { StoreError } from "../errors.js";
import { migrate as runMigrations } from "../migrations.js";
import { clickhouseMigrations, type ClickHouseMigration } from "./schema.js";
import { checkDatabaseName, integerLiteral, quoteString, SqlValues, versionHasBoundParameters } from "./sql.js";

export { versionHasBoundParameters };

/** Where the tests and `openStore` look for a server when no URL is given. */
export const DEFAULT_CLICKHOUSE_URL = "http://127.0.0.1:18123";
/** The database the store uses when the URL names none. */
export const DEFAULT_CLICKHOUSE_DATABASE = "adxkit";

/** Facts per side a load buffers in memory before it stages them. */
export const DEFAULT_CHUNK_ROWS = 50_000;

/** What the server can do. */
export interface ServerInfo {
  /** `SELECT version()`, e.g. `18.16.1` or `24.8.4.13`. */
  version: string;
  /** Bound query parameters (`{name:Type}` + `param_name`); false on 18.x and older. */
  boundParameters: boolean;
}

/** Options of `ClickHouseConnection.open`. */
export interface ClickHouseOptions {
  /** `http://user:password@host:8123/database`; the path names the database (default `adxkit`). */
  url?: string;
  /** Overrides the database of the URL. */
  database?: string;
  /** Force literals even when the server binds parameters (tests of the fallback path). */
  forceLiterals?: boolean;
  /** Facts per side buffered before a load starts staging them (default 50,000; tests use small ones). */
  chunkRows?: number;
}

/** Parses the URL: the database from its path, the rest for the client. */
export function parseClickHouseUrl(url: string, database?: string): { url: string; database: string; username?: string; password?: string } {
  const parsed = new URL(url);
  const fromPath = decodeURIComponent(parsed.pathname.replace(/^\/+|\/+$/g, ""));
  const username = parsed.username ? decodeURIComponent(parsed.username) : undefined;
  const password = parsed.password ? decodeURIComponent(parsed.password) : undefined;
  parsed.pathname = "/";
  parsed.username = "";
  parsed.password = "";
  return { url: parsed.toString().replace(/\/$/, ""), database: checkDatabaseName(database ?? (fromPath || DEFAULT_CLICKHOUSE_DATABASE)), username, password };
}

/** One open store's client, server facts and in-flight calls. */
export class ClickHouseConnection {
  private busy = 0;
  private closed = false;
  private drained?: () => void;

  private constructor(
    readonly client: ClickHouseClient,
    readonly database: string,
    readonly server: ServerInfo,
    readonly chunkRows: number,
  ) {}

  /** Connects, finds out the version and whether parameters bind, creates the database and migrates. */
  static async open(options: ClickHouseOptions = {}): Promise<ClickHouseConnection> {
    const target = parseClickHouseUrl(options.url ?? DEFAULT_CLICKHOUSE_URL, options.database);
    const client = createClient({
      url: target.url,
      username: target.username,
      password: target.password,
      request_timeout: 120_000,
      log: { level: ClickHouseLogLevel.OFF },
    });
    try {
      const version = await queryVersion(client);
      const boundParameters = options.forceLiterals ? false : await probeBoundParameters(client, version);
      const connection = new ClickHouseConnection(client, target.database, { version, boundParameters }, options.chunkRows ?? DEFAULT_CHUNK_ROWS);
      await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${target.database}` });
      await migrate(connection);
      return connection;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  /** A fresh value collector for one statement, bound or literal as the server allows. */
  values(): SqlValues {
    return new SqlValues(this.server.boundParameters);
  }

  /** A table name qualified with the store's database. */
  table(name: string): string {
    return `${this.database}.${name}`;
  }

  /** Runs a SELECT and returns its rows as objects (JSONEachRow). */
  async rows<T = Record<string, unknown>>(query: string, values?: SqlValues): Promise<T[]> {
    const result = await this.client.query({ query, format: "JSONEachRow", query_params: values?.queryParams() });
    return (await result.json()) as T[];
  }

  /**
   * Runs a SELECT and returns its rows as JSON lines (JSONEachRow, one object per line, 64-bit
   * integers as JSON numbers), as the answer's bytes: a large report never becomes a JS string
   * (`query(…).text()` decodes it and measures it again, `exec` hands over the stream).
   */
  async jsonLines(query: string, values?: SqlValues): Promise<Buffer> {
    const result = await this.client.exec({
      query: `${query} FORMAT JSONEachRow`,
      query_params: values?.queryParams(),
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    const chunks: Buffer[] = [];
    for await (const chunk of result.stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** Runs a statement that returns nothing. */
  async command(query: string, values?: SqlValues): Promise<void> {
    await this.client.command({ query, query_params: values?.queryParams() });
  }

  /** Inserts RowBinary bytes (rowbinary.ts) from `body` into `columns` of a table of the store's database; resolves once the server has them all. */
  async insertRowBinary(table: string, columns: readonly string[], body: Readable): Promise<void> {
    // `insert` encodes JSON only; `exec` sends a byte stream as the body of the query.
    const result = await this.client.exec({ query: `INSERT INTO ${this.table(table)} (${columns.join(", ")}) FORMAT RowBinary`, values: body });
    // The answer is empty; read it to its end so the socket goes back to the pool.
    for await (const _ of result.stream);
  }

  /** Inserts rows (JSONEachRow) into a table of the store's database. */
  async insert(table: string, rows: Record<string, unknown>[]): Promise<void> {
    if (rows.length === 0) return;
    await this.client.insert({ table: this.table(table), values: rows, format: "JSONEachRow" });
  }

  /** Runs `work` as one call: refused after close, waited for by close. */
  async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreError("ADX_ERR_STORE_CLOSED", "the report store is closed");
    this.busy++;
    try {
      return await work();
    } finally {
      if (--this.busy === 0) this.drained?.();
    }
  }

  /** Refuses new calls, waits for running ones, closes the client. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.busy > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    await this.client.close();
  }
}

async function queryVersion(client: ClickHouseClient): Promise<string> {
  const result = await client.query({ query: "SELECT version() AS version", format: "JSONEachRow" });
  const [row] = (await result.json()) as { version: string }[];
  return row.version;
}

/**
 * Asks the server to bind one parameter. The version says what to expect; the probe is what
 * counts (a build may differ), and its failure is the 18.x one: `Unknown setting param_…`.
 */
async function probeBoundParameters(client: ClickHouseClient, version: string): Promise<boolean> {
  try {
    const result = await client.query({ query: "SELECT {probe:String} AS probe", query_params: { probe: "ok" }, format: "JSONEachRow" });
    const [row] = (await result.json()) as { probe: string }[];
    return row?.probe === "ok";
  } catch (error) {
    if (/param_|parameter|Unknown setting|Syntax error/i.test((error as Error).message)) return false;
    if (!versionHasBoundParameters(version)) return false;
    throw error;
  }
}

/**
 * Applies the migrations the database lacks (the shared runner, ../migrations.ts); refuses a
 * database written by a newer adxkit. No transactions: every statement is idempotent (IF NOT
 * EXISTS, an insert guarded by its target being empty, an added column that already exists taken
 * as added), so a migration cut short runs again whole.
 */
export function migrate(connection: ClickHouseConnection, list: readonly ClickHouseMigration[] = clickhouseMigrations): Promise<number[]> {
  const table = connection.table("schema_migrations");
  return runMigrations(
    {
      prepare: () => connection.command(`CREATE TABLE IF NOT EXISTS ${table} (version UInt32, name String, applied_at DateTime('UTC')) ENGINE = ReplacingMergeTree ORDER BY version`),
      applied: async () => (await connection.rows<{ version: number }>(`SELECT DISTINCT version FROM ${table}`)).map((r) => Number(r.version)),
      apply: async (migration) => {
        for (const statement of migration.statements) {
          try {
            await connection.command(statement.replaceAll("{db}", connection.database));
          } catch (error) {
            if (!/^\s*ALTER TABLE/i.test(statement) || !/already exists|DUPLICATE_COLUMN|Code: 15\b/i.test((error as Error).message)) throw error;
          }
        }
        // Our own constants, not input; literals work on every server (VALUES takes no parameters on some).
        await connection.command(`INSERT INTO ${table} (version, name, applied_at) VALUES (${integerLiteral(migration.version)}, ${quoteString(migration.name)}, now())`);
      },
    },
    list,
  );
}
