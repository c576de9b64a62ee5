/**
 * The ClickHouse schema (single node), as numbered migrations applied at open and recorded in
 * `schema_migrations`. The cluster variant (ReplicatedMergeTree + Distributed) is in
 * docs/clickhouse.md; the store itself only creates the single-node tables.
 *
 * Layout (why):
 * - Facts keep their identifiers as plain `String`s: ClickHouse compresses repeated strings per
 *   column well, so the DuckDB store's dictionaries (`dim_*`) buy nothing here, and ORDER BY on
 *   String compares bytes, the order the reports promise.
 * - `*_hourly` and `*_daily` are SummingMergeTree: same-key facts add up when parts merge, in
 *   the background and never necessarily completely, so every query still sums and groups.
 * - Sorting keys start with the account's scope (publisher_id / bidder_id), then time: every
 *   report filters on both, so it reads a narrow range of each part.
 * - `*_daily` is filled by a materialized view on `*_hourly` (the hourly rollup's daily sum, per
 *   inserted block), so reports over whole days read about a twentieth of the rows.
 * - A large load goes to tables of its own first (`load_<id>_*`, made at load time AS the store's
 *   tables), whose parts move into the store's only once every fact checked out; a failed load
 *   drops them (load-tables.ts). ClickHouse has no transactions: this makes a load all-or-nothing
 *   against bad facts and failing sources, not against a server dying while the parts move
 *   (docs/clickhouse.md). Migration 1's `*_staging` tables served the same end until migration 6.
 * - Accounts are a ReplacingMergeTree keyed by userid with a version column: a revocation
 *   inserts a newer version of the row; reads use FINAL.
 * - Billed impressions (`*_billed`) are a row per billing token, a ReplacingMergeTree sorted by
 *   scope, hour and token id: the same token given by several exchange nodes is one row after a
 *   merge, and reports read it with FINAL (billed.ts, docs/clickhouse.md).
 * - Settled days (`*_billed_daily`): a day's billed rows summed by the side's whole key once no
 *   regular write for it can come, a ReplacingMergeTree with the settling's version, so settling
 *   again (another node, a late row) replaces the sums instead of adding to them (settle.ts).
 * - Account changes (`account_changes`): a row per change, never merged away, whose count every
 *   node polls to drop cached credentials and reload auction keys (accounts.ts).
 */

import type { Migration } from "../migrations.js";

/** One schema change: statements with `{db}` standing for the database name. */
export type ClickHouseMigration = Migration;

const metrics = "request UInt64, response UInt64, impression UInt64, revenue Float64";
const supplyKeys = "publisher_id String, app_bundle_id String, placement_id String, ad_format UInt32, platform UInt32, country String";
const demandKeys = "bidder_id String, ad_format UInt32, platform UInt32";
const sums = "(request, response, impression, revenue)";
const supplyKeyNames = "app_bundle_id, placement_id, ad_format, platform, country";
const demandKeyNames = "ad_format, platform";
const summaryKeys = "publisher_id String, ad_format UInt32, platform UInt32, country String";
const summaryKeyNames = "ad_format, platform, country";
const sumsAs = "sum(request) AS request, sum(response) AS response, sum(impression) AS impression, sum(revenue) AS revenue";

/**
 * A rollup added after the facts: its table, then (only while it is still empty, so a migration
 * cut short and run again adds nothing twice) the sums of the daily rollup, then its view. Loads
 * between the backfill and the view would be missing from it: migrate with loads stopped.
 */
function addedRollup(table: string, time: string, timeOf: { daily: string; hourly: string }, keys: string, scope: string, keyNames: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS {db}.${table} (${time} Date, ${keys}, ${metrics})
       ENGINE = SummingMergeTree(${sums}) PARTITION BY toYYYYMM(${time}) ORDER BY (${scope}, ${time}, ${keyNames})`,
    `INSERT INTO {db}.${table} (${time}, ${scope}, ${keyNames}, request, response, impression, revenue)
       SELECT ${timeOf.daily} AS ${time}, ${scope}, ${keyNames}, ${sumsAs} FROM {db}.${table.split("_")[0]}_daily
       WHERE (SELECT count() FROM {db}.${table}) = 0 GROUP BY ${time}, ${scope}, ${keyNames}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.${table}_mv TO {db}.${table} AS
       SELECT ${timeOf.hourly} AS ${time}, ${scope}, ${keyNames}, ${sumsAs} FROM {db}.${table.split("_")[0]}_hourly GROUP BY ${time}, ${scope}, ${keyNames}`,
  ];
}
const monthOf = { daily: "toStartOfMonth(day)", hourly: "toStartOfMonth(hour)" };

/** Every migration, in order. Append only. */
export const clickhouseMigrations: ClickHouseMigration[] = [
  {
    version: 1,
    name: "facts, daily rollups, staging, accounts",
    statements: [
      `CREATE TABLE IF NOT EXISTS {db}.supply_hourly (hour DateTime('UTC'), ${supplyKeys}, ${metrics})
         ENGINE = SummingMergeTree(${sums}) PARTITION BY toYYYYMM(hour)
         ORDER BY (publisher_id, hour, ${supplyKeyNames})`,
      `CREATE TABLE IF NOT EXISTS {db}.supply_daily (day Date, ${supplyKeys}, ${metrics})
         ENGINE = SummingMergeTree(${sums}) PARTITION BY toYYYYMM(day)
         ORDER BY (publisher_id, day, ${supplyKeyNames})`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.supply_daily_mv TO {db}.supply_daily AS
         SELECT toDate(hour) AS day, publisher_id, ${supplyKeyNames},
                sum(request) AS request, sum(response) AS response, sum(impression) AS impression, sum(revenue) AS revenue
         FROM {db}.supply_hourly GROUP BY day, publisher_id, ${supplyKeyNames}`,
      `CREATE TABLE IF NOT EXISTS {db}.demand_hourly (hour DateTime('UTC'), ${demandKeys}, ${metrics})
         ENGINE = SummingMergeTree(${sums}) PARTITION BY toYYYYMM(hour)
         ORDER BY (bidder_id, hour, ${demandKeyNames})`,
      `CREATE TABLE IF NOT EXISTS {db}.demand_daily (day Date, ${demandKeys}, ${metrics})
         ENGINE = SummingMergeTree(${sums}) PARTITION BY toYYYYMM(day)
         ORDER BY (bidder_id, day, ${demandKeyNames})`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.demand_daily_mv TO {db}.demand_daily AS
         SELECT toDate(hour) AS day, bidder_id, ${demandKeyNames},
                sum(request) AS request, sum(response) AS response, sum(impression) AS impression, sum(revenue) AS revenue
         FROM {db}.demand_hourly GROUP BY day, bidder_id, ${demandKeyNames}`,
      `CREATE TABLE IF NOT EXISTS {db}.supply_staging (batch UInt64, hour DateTime('UTC'), ${supplyKeys}, ${metrics})
         ENGINE = MergeTree PARTITION BY batch ORDER BY (publisher_id, hour)`,
      `CREATE TABLE IF NOT EXISTS {db}.demand_staging (batch UInt64, hour DateTime('UTC'), ${demandKeys}, ${metrics})
         ENGINE = MergeTree PARTITION BY batch ORDER BY (bidder_id, hour)`,
      `CREATE TABLE IF NOT EXISTS {db}.accounts (
         userid String, side String, bidder_id Nullable(String), publisher_ids Array(String),
         legacy UInt8, placement_dimensions UInt8, token_sha256 String,
         created_at_ms UInt64, revoked_at_ms UInt64, version UInt64
       ) ENGINE = ReplacingMergeTree(version) ORDER BY userid`,
    ],
  },
  {
    version: 2,
    name: "spool checkpoints and counted billing tokens (crash recovery of the exchange)",
    statements: [
      // Written right after the facts of each exchange flush (recovery.ts); reads use FINAL.
      `CREATE TABLE IF NOT EXISTS {db}.spool_checkpoints (name String, position String, version UInt64)
         ENGINE = ReplacingMergeTree(version) ORDER BY name`,
      `CREATE TABLE IF NOT EXISTS {db}.billing_tokens (token_id String, expires_ms UInt64)
         ENGINE = MergeTree ORDER BY token_id`,
    ],
  },
  {
    version: 3,
    name: "monthly rollups and summary rollups (spec/report-model.yaml rollups), filled from the daily ones",
    statements: [
      ...addedRollup("supply_monthly", "month", monthOf, supplyKeys, "publisher_id", supplyKeyNames),
      ...addedRollup("supply_daily_summary", "day", { daily: "day", hourly: "toDate(hour)" }, summaryKeys, "publisher_id", summaryKeyNames),
      ...addedRollup("supply_monthly_summary", "month", monthOf, summaryKeys, "publisher_id", summaryKeyNames),
      ...addedRollup("demand_monthly", "month", monthOf, demandKeys, "bidder_id", demandKeyNames),
    ],
  },
  {
    version: 4,
    name: "auction keys of supply accounts (POST /openrtb2/auction)",
    statements: [
      // One key per account: a reissue inserts a newer version; reads use FINAL.
      `CREATE TABLE IF NOT EXISTS {db}.auction_keys (userid String, key_sha256 String, version UInt64)
         ENGINE = ReplacingMergeTree(version) ORDER BY userid`,
    ],
  },
  {
    version: 5,
    name: "billed impressions per billing token, counted once across exchange nodes",
    statements: [
      // A token's rows are equal in every column (its claims fix key and price): any one is the impression.
      `CREATE TABLE IF NOT EXISTS {db}.supply_billed (hour DateTime('UTC'), ${supplyKeys}, ${metrics}, token_id String)
         ENGINE = ReplacingMergeTree PARTITION BY toYYYYMM(hour) ORDER BY (publisher_id, hour, token_id)`,
      `CREATE TABLE IF NOT EXISTS {db}.demand_billed (hour DateTime('UTC'), ${demandKeys}, ${metrics}, token_id String)
         ENGINE = ReplacingMergeTree PARTITION BY toYYYYMM(hour) ORDER BY (bidder_id, hour, token_id)`,
    ],
  },
  {
    version: 6,
    name: "no staging tables: a large load stages in tables of its own (load-tables.ts)",
    statements: ["DROP TABLE IF EXISTS {db}.supply_staging", "DROP TABLE IF EXISTS {db}.demand_staging"],
  },
  {
    version: 7,
    name: "daily rollup by publisher, app and country (spec/report-model.yaml daily_apps), filled from the daily one",
    statements: addedRollup("supply_daily_apps", "day", { daily: "day", hourly: "toDate(hour)" }, "publisher_id String, app_bundle_id String, country String", "publisher_id", "app_bundle_id, country"),
  },
  {
    version: 8,
    name: "settled billed impressions: a day's billed rows as per-day sums once no regular write can come (settle.ts)",
    statements: [
      // One settling's sums per key and day; settling again writes a newer version of every key.
      `CREATE TABLE IF NOT EXISTS {db}.supply_billed_daily (day Date, ${supplyKeys}, ${metrics}, version UInt64)
         ENGINE = ReplacingMergeTree(version) PARTITION BY toYYYYMM(day) ORDER BY (publisher_id, day, ${supplyKeyNames})`,
      `CREATE TABLE IF NOT EXISTS {db}.demand_billed_daily (day Date, ${demandKeys}, ${metrics}, version UInt64)
         ENGINE = ReplacingMergeTree(version) PARTITION BY toYYYYMM(day) ORDER BY (bidder_id, day, ${demandKeyNames})`,
      // Written after a day's sums; read_at: the server's clock (seconds) when the settling began to read.
      `CREATE TABLE IF NOT EXISTS {db}.billed_settled (side String, day Date, read_at UInt32, version UInt64)
         ENGINE = ReplacingMergeTree(version) ORDER BY (side, day)`,
      // A billed row written after its day could have been settled; the latest mark of a day is what counts.
      `CREATE TABLE IF NOT EXISTS {db}.billed_late (side String, day Date, marked_at UInt32)
         ENGINE = ReplacingMergeTree(marked_at) ORDER BY (side, day)`,
    ],
  },
  {
    version: 9,
    name: "account changes, polled by every node to drop cached credentials and reload auction keys (accounts.ts)",
    statements: [
      // A plain MergeTree: merges never drop its rows, so its count moves with every change (18.16 has no TTL).
      `CREATE TABLE IF NOT EXISTS {db}.account_changes (changed_at_ms UInt64, userid String, change String)
         ENGINE = MergeTree ORDER BY changed_at_ms`,
    ],
  },
  {
    version: 10,
    name: "daily rollup by publisher and country (spec/report-model.yaml daily_countries), filled from the daily one",
    statements: addedRollup("supply_daily_countries", "day", { daily: "day", hourly: "toDate(hour)" }, "publisher_id String, country String", "publisher_id", "country"),
  },
];

