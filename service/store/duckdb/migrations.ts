/**
 * The DuckDB schema, as numbered migrations. `migrate` applies the missing ones at open, each
 * in its own transaction, and records it in `schema_migrations`; applied ones never change.
 *
 * Layout (why): facts are appended, never updated, and summed at query time, so same-key facts
 * add up without an index slowing the load. Identifiers are dictionary-encoded (`dim_*`), which
 * keeps the fact tables all-integer: the Appender copies typed arrays instead of one string at a
 * time, and scans and group-bys work on integers. Each load also writes a daily rollup
 * (`*_daily`), so reports over whole days read roughly a twentieth of the rows. The views
 * `supply_facts` and `demand_facts` show the facts decoded, for people with a SQL prompt.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { StoreError } from "../errors.js";

/** One schema change. */
export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

const dictionary = (table: string) => `CREATE TABLE ${table} (code INTEGER PRIMARY KEY, value VARCHAR NOT NULL UNIQUE)`;
const metrics = "request BIGINT NOT NULL, response BIGINT NOT NULL, impression BIGINT NOT NULL, revenue DOUBLE NOT NULL";
const supplyKeys =
  "publisher_code INTEGER NOT NULL, app_bundle_code INTEGER NOT NULL, placement_code INTEGER NOT NULL, ad_format INTEGER NOT NULL, platform INTEGER NOT NULL, country_code INTEGER NOT NULL";
const demandKeys = "bidder_code INTEGER NOT NULL, ad_format INTEGER NOT NULL, platform INTEGER NOT NULL";

/** Every migration, in order. Append only. */
export const migrations: Migration[] = [
  {
    version: 1,
    name: "facts, dictionaries, daily rollups, accounts",
    statements: [
      "CREATE SEQUENCE ingest_batch_seq START 1",
      "CREATE TABLE ingest_batches (batch INTEGER PRIMARY KEY, ingested_at TIMESTAMP NOT NULL, supply_facts BIGINT NOT NULL, demand_facts BIGINT NOT NULL)",
      dictionary("dim_publisher"),
      dictionary("dim_app_bundle"),
      dictionary("dim_placement"),
      dictionary("dim_country"),
      dictionary("dim_bidder"),
      // `batch` names the load a row came from, so the load can roll up exactly its own rows.
      `CREATE TABLE supply_hourly (batch INTEGER NOT NULL, hour TIMESTAMP NOT NULL, ${supplyKeys}, ${metrics})`,
      `CREATE TABLE supply_daily (day DATE NOT NULL, ${supplyKeys}, ${metrics})`,
      `CREATE TABLE demand_hourly (batch INTEGER NOT NULL, hour TIMESTAMP NOT NULL, ${demandKeys}, ${metrics})`,
      `CREATE TABLE demand_daily (day DATE NOT NULL, ${demandKeys}, ${metrics})`,
      `CREATE VIEW supply_facts AS
         SELECT f.hour AS date_hour, p.value AS publisher_id, a.value AS app_bundle_id, l.value AS placement_id,
                f.ad_format, f.platform, c.value AS country, f.request, f.response, f.impression, f.revenue
         FROM supply_hourly f
         JOIN dim_publisher p ON p.code = f.publisher_code
         JOIN dim_app_bundle a ON a.code = f.app_bundle_code
         JOIN dim_placement l ON l.code = f.placement_code
         JOIN dim_country c ON c.code = f.country_code`,
      `CREATE VIEW demand_facts AS
         SELECT f.hour AS date_hour, b.value AS bidder_id, f.ad_format, f.platform, f.request, f.response, f.impression, f.revenue
         FROM demand_hourly f JOIN dim_bidder b ON b.code = f.bidder_code`,
      `CREATE TABLE accounts (
         userid VARCHAR PRIMARY KEY,
         side VARCHAR NOT NULL CHECK (side IN ('demand', 'supply')),
         bidder_id VARCHAR,
         publisher_ids VARCHAR[],
         legacy BOOLEAN NOT NULL,
         placement_dimensions BOOLEAN NOT NULL,
         token_sha256 BLOB NOT NULL,
         created_at TIMESTAMP NOT NULL,
         revoked_at TIMESTAMP
       )`,
    ],
  },
  {
    version: 2,
    name: "spool checkpoints and counted billing tokens (crash recovery of the exchange)",
    statements: [
      // Written in the same transaction as the facts of each exchange flush (recovery.ts).
      "CREATE TABLE spool_checkpoints (name VARCHAR PRIMARY KEY, position VARCHAR NOT NULL, updated_at TIMESTAMP NOT NULL)",
      // No key: the exchange never counts a token twice, and a set is built from it at start.
      "CREATE TABLE billing_tokens (token_id VARCHAR NOT NULL, expires_ms BIGINT NOT NULL)",
    ],
  },
  {
    version: 3,
    name: "auction keys of supply accounts (POST /openrtb2/auction)",
    statements: [
      // One key per account, replaced when reissued; kept as its SHA-256 only, like the credentials.
      "CREATE TABLE auction_keys (userid VARCHAR PRIMARY KEY, key_sha256 BLOB NOT NULL, issued_at TIMESTAMP NOT NULL)",
    ],
  },
];

/** Applies the migrations the database lacks; safe to run on every open. Returns the versions applied. */
export async function migrate(connection: DuckDBConnection, list: Migration[] = migrations): Promise<number[]> {
  await connection.run(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)",
  );
  const reader = await connection.runAndReadAll("SELECT version FROM schema_migrations ORDER BY version");
  const applied = new Set(reader.getRowsJS().map((row) => Number(row[0])));
  const known = Math.max(0, ...list.map((m) => m.version));
  const newest = Math.max(0, ...applied);
  if (newest > known) {
    throw new StoreError("ADX_ERR_STORE_SCHEMA_NEWER", `database schema version ${newest} is newer than this adxkit knows (${known})`);
  }
  const done: number[] = [];
  for (const migration of list) {
    if (applied.has(migration.version)) continue;
    await connection.run("BEGIN TRANSACTION");
    try {
      for (const statement of migration.statements) await connection.run(statement);
      await connection.run("INSERT INTO schema_migrations VALUES ($1, $2, current_timestamp::TIMESTAMP)", [migration.version, migration.name]);
      await connection.run("COMMIT");
    } catch (error) {
      await connection.run("ROLLBACK");
      throw error;
    }
    done.push(migration.version);
  }
  return done;
}
