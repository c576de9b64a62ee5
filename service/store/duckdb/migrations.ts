/**
 * The DuckDB schema, as numbered migrations (service/store/migrations.ts runs them at open, each
 * in its own transaction). Applied ones never change: a migration's SQL is written out, not
 * derived from today's report model (layout.ts names the tables and columns it creates).
 *
 * Layout (why): facts are appended, never updated, and summed at query time, so same-key facts
 * add up without an index slowing the load. Identifiers are dictionary-encoded (`dim_*`), which
 * keeps the fact tables all-integer: the Appender copies typed arrays instead of one string at a
 * time, and scans and group-bys work on integers. Each load also writes the rollups of
 * spec/report-model.yaml (daily and monthly, with all dimensions or a summary of them), so a
 * report over whole days or months reads a fraction of the rows. The views `supply_facts` and
 * `demand_facts` show the facts decoded, for people with a SQL prompt.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { migrate as runMigrations, type Migration } from "../migrations.js";

const dictionary = (table: string) => `CREATE TABLE ${table} (code INTEGER PRIMARY KEY, value VARCHAR NOT NULL UNIQUE)`;
const metrics = "request BIGINT NOT NULL, response BIGINT NOT NULL, impression BIGINT NOT NULL, revenue DOUBLE NOT NULL";
const supplyKeys =
  "publisher_code INTEGER NOT NULL, app_bundle_code INTEGER NOT NULL, placement_code INTEGER NOT NULL, ad_format INTEGER NOT NULL, platform INTEGER NOT NULL, country_code INTEGER NOT NULL";
const demandKeys = "bidder_code INTEGER NOT NULL, ad_format INTEGER NOT NULL, platform INTEGER NOT NULL";
const supplySummaryKeys = "publisher_code INTEGER NOT NULL, ad_format INTEGER NOT NULL, platform INTEGER NOT NULL, country_code INTEGER NOT NULL";
const sums = "SUM(request), SUM(response), SUM(impression), SUM(revenue)";
const month = "CAST(date_trunc('month', day) AS DATE)";
const supplyKeyNames = "publisher_code, app_bundle_code, placement_code, ad_format, platform, country_code";

/** A rollup's rows summed into one per key and period (migration 7): summed aside, deleted, inserted again in time order. */
const compacted = (table: string, time: string, keys: string) => [
  `CREATE TEMP TABLE compact_${table} AS SELECT ${time}, ${keys}, CAST(SUM(request) AS BIGINT) AS request, CAST(SUM(response) AS BIGINT) AS response,
     CAST(SUM(impression) AS BIGINT) AS impression, SUM(revenue) AS revenue FROM ${table} GROUP BY ALL ORDER BY ${time}`,
  `DELETE FROM ${table}`,
  `INSERT INTO ${table} (${time}, ${keys}, request, response, impression, revenue) SELECT * FROM compact_${table}`,
  `DROP TABLE compact_${table}`,
];

export type { Migration };

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
    name: "monthly rollups and summary rollups (spec/report-model.yaml rollups), filled from the daily ones",
    statements: [
      `CREATE TABLE supply_monthly (month DATE NOT NULL, ${supplyKeys}, ${metrics})`,
      `CREATE TABLE supply_daily_summary (day DATE NOT NULL, ${supplySummaryKeys}, ${metrics})`,
      `CREATE TABLE supply_monthly_summary (month DATE NOT NULL, ${supplySummaryKeys}, ${metrics})`,
      `CREATE TABLE demand_monthly (month DATE NOT NULL, ${demandKeys}, ${metrics})`,
      // The daily rollups hold every fact loaded so far, summed: the new ones start from them.
      `INSERT INTO supply_monthly SELECT ${month} AS m, publisher_code, app_bundle_code, placement_code, ad_format, platform, country_code, ${sums}
         FROM supply_daily GROUP BY ALL ORDER BY m`,
      `INSERT INTO supply_daily_summary SELECT day, publisher_code, ad_format, platform, country_code, ${sums} FROM supply_daily GROUP BY ALL ORDER BY day`,
      `INSERT INTO supply_monthly_summary SELECT ${month} AS m, publisher_code, ad_format, platform, country_code, ${sums} FROM supply_daily GROUP BY ALL ORDER BY m`,
      `INSERT INTO demand_monthly SELECT ${month} AS m, bidder_code, ad_format, platform, ${sums} FROM demand_daily GROUP BY ALL ORDER BY m`,
    ],
  },
  {
    version: 4,
    name: "auction keys of supply accounts (POST /openrtb2/auction)",
    statements: [
      // One key per account, replaced when reissued; kept as its SHA-256 only, like the credentials.
      "CREATE TABLE auction_keys (userid VARCHAR PRIMARY KEY, key_sha256 BLOB NOT NULL, issued_at TIMESTAMP NOT NULL)",
    ],
  },
  {
    version: 5,
    name: "daily rollup by publisher, app and country (spec/report-model.yaml daily_apps), filled from the daily one",
    statements: [
      `CREATE TABLE supply_daily_apps (day DATE NOT NULL, publisher_code INTEGER NOT NULL, app_bundle_code INTEGER NOT NULL, country_code INTEGER NOT NULL, ${metrics})`,
      `INSERT INTO supply_daily_apps SELECT day, publisher_code, app_bundle_code, country_code, ${sums} FROM supply_daily GROUP BY ALL ORDER BY day`,
    ],
  },
  {
    version: 6,
    name: "daily rollup by publisher and country (spec/report-model.yaml daily_countries), filled from the daily summary",
    statements: [
      `CREATE TABLE supply_daily_countries (day DATE NOT NULL, publisher_code INTEGER NOT NULL, country_code INTEGER NOT NULL, ${metrics})`,
      `INSERT INTO supply_daily_countries SELECT day, publisher_code, country_code, ${sums} FROM supply_daily_summary GROUP BY ALL ORDER BY day`,
    ],
  },
  {
    version: 7,
    name: "rollups compacted to one row per key and period, and the record of the periods written by more than one load (rollup-periods.ts)",
    statements: [
      "CREATE TABLE rollup_periods (side VARCHAR NOT NULL, grain VARCHAR NOT NULL, period DATE NOT NULL, loads INTEGER NOT NULL, PRIMARY KEY (side, grain, period))",
      ...compacted("supply_daily", "day", supplyKeyNames),
      ...compacted("supply_monthly", "month", supplyKeyNames),
      ...compacted("supply_daily_summary", "day", "publisher_code, ad_format, platform, country_code"),
      ...compacted("supply_monthly_summary", "month", "publisher_code, ad_format, platform, country_code"),
      ...compacted("supply_daily_apps", "day", "publisher_code, app_bundle_code, country_code"),
      ...compacted("supply_daily_countries", "day", "publisher_code, country_code"),
      ...compacted("demand_daily", "day", "bidder_code, ad_format, platform"),
      ...compacted("demand_monthly", "month", "bidder_code, ad_format, platform"),
      // Every period now one row per key: written by one load, as far as the record goes.
      "INSERT INTO rollup_periods SELECT DISTINCT 'supply', 'day', day, 1 FROM supply_daily",
      "INSERT INTO rollup_periods SELECT DISTINCT 'supply', 'month', month, 1 FROM supply_monthly",
      "INSERT INTO rollup_periods SELECT DISTINCT 'demand', 'day', day, 1 FROM demand_daily",
      "INSERT INTO rollup_periods SELECT DISTINCT 'demand', 'month', month, 1 FROM demand_monthly",
    ],
  },
];

/** Applies the migrations the database lacks, each in its own transaction; returns the versions applied. */
export function migrate(connection: DuckDBConnection, list: readonly Migration[] = migrations): Promise<number[]> {
  return runMigrations(
    {
      prepare: () => connection.run("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)").then(() => undefined),
      applied: async () => (await connection.runAndReadAll("SELECT version FROM schema_migrations")).getRowsJS().map((row) => Number(row[0])),
      apply: async (migration) => {
        await connection.run("BEGIN TRANSACTION");
        try {
          for (const statement of migration.statements) await connection.run(statement);
          await connection.run("INSERT INTO schema_migrations VALUES ($1, $2, current_timestamp::TIMESTAMP)", [migration.version, migration.name]);
          await connection.run("COMMIT");
        } catch (error) {
          await connection.run("ROLLBACK");
          throw error;
        }
      },
    },
    list,
  );
}
