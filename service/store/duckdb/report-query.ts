/**
 * Builds the SQL of one report. Every value from the query is a bound parameter; the only text
 * spliced into the SQL comes from the fixed tables below, looked up by whitelisted name.
 *
 * Shape: a source (the daily rollup for whole days, the hourly facts for the hours around them;
 * hourly only when date_hour is asked for) → one aggregation by the requested dimensions →
 * derived metrics, total row count, sort (by name for coded dimensions) and limit.
 */
import {
  DATE,
  INTEGER,
  LIST,
  TIMESTAMP,
  VARCHAR,
  DuckDBDateValue,
  DuckDBTimestampValue,
  listValue,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";
import type { Dimension, Metric, ReportQuery, Side } from "../store.js";
import type { DictionaryTable } from "./dictionary.js";

import { DAY_MS, timeRanges } from "../time-ranges.js";
import { checkIntegers, checkStrings, invalidQuery as invalid, reportTimeMillis } from "../checks.js";
/** Largest `limit` (interface document 8). */
export const MAX_LIMIT = 50_000;

/** The sums a metric needs. */
type Sum = "request" | "response" | "impression" | "revenue";

interface MetricSql {
  needs: Sum[];
  /** Over the aggregated row `g`; a zero denominator gives 0; floats rounded to 6 decimals. */
  sql: string;
}

const METRICS = new Map<Metric, MetricSql>([
  ["revenue", { needs: ["revenue"], sql: "ROUND(COALESCE(g.revenue, 0), 6)" }],
  // Counts leave as DOUBLE, exact below 2^53, so JS gets numbers without a bigint detour.
  ["request", { needs: ["request"], sql: "CAST(COALESCE(g.request, 0) AS DOUBLE)" }],
  ["response", { needs: ["response"], sql: "CAST(COALESCE(g.response, 0) AS DOUBLE)" }],
  ["impression", { needs: ["impression"], sql: "CAST(COALESCE(g.impression, 0) AS DOUBLE)" }],
  [
    "fill_rate",
    {
      needs: ["response", "request"],
      sql: "ROUND(CASE WHEN COALESCE(g.request, 0) = 0 THEN 0.0 ELSE CAST(g.response AS DOUBLE) / CAST(g.request AS DOUBLE) END, 6)",
    },
  ],
  [
    "render_rate",
    {
      needs: ["impression", "response"],
      sql: "ROUND(CASE WHEN COALESCE(g.response, 0) = 0 THEN 0.0 ELSE CAST(g.impression AS DOUBLE) / CAST(g.response AS DOUBLE) END, 6)",
    },
  ],
  [
    "ecpm",
    {
      needs: ["revenue", "impression"],
      sql: "ROUND(CASE WHEN COALESCE(g.impression, 0) = 0 THEN 0.0 ELSE g.revenue * 1000 / CAST(g.impression AS DOUBLE) END, 6)",
    },
  ],
]);

interface DimensionSql {
  /** The source column the dimension groups by. */
  column: "day" | "hour" | "platform" | "ad_format" | "app_bundle_code" | "country_code" | "placement_code" | "publisher_code" | "bidder_code";
  /** How the value leaves DuckDB, as a number; `report.ts` turns it into the printed value. */
  kind: OutputKind;
  /** The dictionary holding the names of a coded column. */
  dictionary?: DictionaryTable;
}

/**
 * Dimension values leave DuckDB as numbers (days, epoch milliseconds, dictionary codes) and are
 * printed in JS: decoding millions of strings out of DuckDB's vectors costs more than the query.
 */
export type OutputKind = "day" | "hour" | "integer" | "code" | "number";

const DIMENSIONS = new Map<Dimension, DimensionSql>([
  ["date", { column: "day", kind: "day" }],
  ["date_hour", { column: "hour", kind: "hour" }],
  ["platform", { column: "platform", kind: "integer" }],
  ["ad_format", { column: "ad_format", kind: "integer" }],
  ["app_bundle_id", { column: "app_bundle_code", kind: "code", dictionary: "dim_app_bundle" }],
  ["country", { column: "country_code", kind: "code", dictionary: "dim_country" }],
  ["placement_id", { column: "placement_code", kind: "code", dictionary: "dim_placement" }],
  ["publisher_id", { column: "publisher_code", kind: "code", dictionary: "dim_publisher" }],
]);

/** The SQL that hands a grouped key to JS as a number. */
const OUTPUT_SQL: Record<OutputKind, (k: string) => string> = {
  day: (k) => `CAST(${k} - DATE '1970-01-01' AS INTEGER)`,
  hour: (k) => `CAST(epoch_ms(${k}) AS DOUBLE)`,
  integer: (k) => k,
  code: (k) => k,
  number: (k) => k,
};

type FilterName = keyof ReportQuery["filters"];
interface FilterSql {
  column: string;
  /** Integer filters compare the column; string filters go through the dictionary. */
  kind: "integer" | "string";
  dictionary?: string;
}

interface SideSql {
  hourly: string;
  daily: string;
  dimensions: ReadonlySet<Dimension>;
  filters: ReadonlyMap<FilterName, FilterSql>;
}

const SIDES: Record<Side, SideSql> = {
  supply: {
    hourly: "supply_hourly",
    daily: "supply_daily",
    dimensions: new Set(DIMENSIONS.keys()),
    filters: new Map<FilterName, FilterSql>([
      ["ad_format", { column: "ad_format", kind: "integer" }],
      ["platform", { column: "platform", kind: "integer" }],
      ["placement_id", { column: "placement_code", kind: "string", dictionary: "dim_placement" }],
      ["app_bundle_id", { column: "app_bundle_code", kind: "string", dictionary: "dim_app_bundle" }],
      ["country", { column: "country_code", kind: "string", dictionary: "dim_country" }],
    ]),
  },
  demand: {
    hourly: "demand_hourly",
    daily: "demand_daily",
    dimensions: new Set<Dimension>(["date", "date_hour", "platform", "ad_format"]),
    // Interface document 4.1 rule 2: only ad_format filters demand reports; other names are ignored.
    filters: new Map<FilterName, FilterSql>([["ad_format", { column: "ad_format", kind: "integer" }]]),
  },
};

/** One output column: the row key, how to print its value, and for codes the dictionary. */
export interface OutputColumn {
  name: string;
  kind: OutputKind;
  dictionary?: DictionaryTable;
}

/** A report ready to run: SQL, its parameters, and the output columns (then one more: the total). */
export interface BuiltReport {
  sql: string;
  values: DuckDBValue[];
  types: DuckDBType[];
  columns: OutputColumn[];
}

/** Collects bound parameters and hands out their `$n` placeholders. */
class Parameters {
  readonly values: DuckDBValue[] = [];
  readonly types: DuckDBType[] = [];
  add(value: DuckDBValue, type: DuckDBType): string {
    this.values.push(value);
    this.types.push(type);
    return `$${this.values.length}`;
  }
}

const timestamp = (millis: number) => new DuckDBTimestampValue(BigInt(millis) * 1000n);
const date = (millis: number) => new DuckDBDateValue(Math.floor(millis / DAY_MS));

/** Which rows to read: whole days from the daily rollup, single hours from the hourly facts. */

/** Builds the SQL and parameters of a report; throws `StoreError` (ADX_ERR_STORE_QUERY_INVALID). */
export function buildReport(query: ReportQuery): BuiltReport {
  const side = Object.hasOwn(SIDES, query.side) ? SIDES[query.side] : invalid(`unknown side ${JSON.stringify(query.side)}`);
  if (!Array.isArray(query.metrics) || query.metrics.length === 0) invalid("metrics must not be empty");
  const metrics = [...new Set(query.metrics)].map((name) => [name, METRICS.get(name) ?? invalid(`unknown metric ${JSON.stringify(name)}`)] as const);
  const dimensions = [...new Set(query.dimensions ?? [])].map((name) => {
    if (!side.dimensions.has(name)) invalid(`dimension ${JSON.stringify(name)} is not available on the ${query.side} side`);
    return [name, DIMENSIONS.get(name)!] as const;
  });
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_LIMIT) invalid(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  const startMs = reportTimeMillis("start", query.start);
  const endMs = reportTimeMillis("end", query.end);

  const params = new Parameters();
  const conditions: string[] = [];

  // Scope: the account's own rows only.
  if (query.side === "demand") {
    const bidder = (query.scope as { bidder_id?: unknown }).bidder_id;
    if (typeof bidder !== "string") invalid("a demand query needs scope.bidder_id");
    conditions.push(`s.bidder_code IN (SELECT code FROM dim_bidder WHERE value = ${params.add(bidder, VARCHAR)})`);
  } else {
    const publishers = (query.scope as { publisher_ids?: unknown }).publisher_ids;
    if (!Array.isArray(publishers)) invalid("a supply query needs scope.publisher_ids");
    const ids = checkStrings("scope.publisher_ids", publishers);
    conditions.push(
      ids.length === 0
        ? "FALSE"
        : `s.publisher_code IN (SELECT code FROM dim_publisher WHERE list_contains(${params.add(listValue(ids), LIST(VARCHAR))}, value))`,
    );
  }

  // Filters: an empty array is no filter at all (as if the parameter were absent), not "match nothing".
  for (const [name, filter] of side.filters) {
    const given = query.filters?.[name];
    if (given === undefined || given === null) continue;
    if (!Array.isArray(given)) invalid(`filter ${name} must be an array`);
    if (given.length === 0) continue;
    if (filter.kind === "integer") {
      const placeholders = checkIntegers(name, given).map((v) => params.add(v, INTEGER));
      conditions.push(`s.${filter.column} IN (${placeholders.join(", ")})`);
    } else {
      const list = params.add(listValue(checkStrings(name, given)), LIST(VARCHAR));
      conditions.push(`s.${filter.column} IN (SELECT code FROM ${filter.dictionary} WHERE list_contains(${list}, value))`);
    }
  }

  // Source: the columns the aggregation needs, from the rollup and/or the hourly facts.
  const sums = new Set<Sum>(metrics.flatMap(([, m]) => m.needs));
  const keyColumns = dimensions.map(([, d]) => d.column);
  const needsHour = keyColumns.includes("hour");
  const ranges = timeRanges(startMs, endMs, !needsHour);
  const filterSql = conditions.map((c) => ` AND ${c}`).join("");
  const parts: string[] = [];
  const project = (daily: boolean) =>
    [...new Set(keyColumns)]
      .map((c) => (c === "day" ? (daily ? "s.day AS day" : "CAST(s.hour AS DATE) AS day") : `s.${c} AS ${c}`))
      .concat([...sums].map((m) => `s.${m} AS ${m}`))
      .join(", ");
  if (ranges.days) {
    const [from, to] = ranges.days;
    parts.push(`SELECT ${project(true)} FROM ${side.daily} s WHERE s.day BETWEEN ${params.add(date(from), DATE)} AND ${params.add(date(to), DATE)}${filterSql}`);
  }
  for (const [from, to] of ranges.hours) {
    parts.push(
      `SELECT ${project(false)} FROM ${side.hourly} s WHERE s.hour BETWEEN ${params.add(timestamp(from), TIMESTAMP)} AND ${params.add(timestamp(to), TIMESTAMP)}${filterSql}`,
    );
  }

  // Aggregate by the dimensions, then derive, decode, count, sort and limit.
  const keys = dimensions.map(([, d], i) => `src.${d.column} AS k${i}`);
  const aggregates = [...sums].map((m) => `SUM(src.${m}) AS ${m}`);
  const groupBy = dimensions.length > 0 ? ` GROUP BY ${dimensions.map((_, i) => `k${i}`).join(", ")}` : "";
  const grouped = `SELECT ${[...keys, ...aggregates].join(", ")} FROM (${parts.join(" UNION ALL ")}) src${groupBy}`;

  // Names are joined only to sort by them; the codes themselves are what leaves DuckDB.
  const outputs = dimensions.map(([name, d], i) => `${OUTPUT_SQL[d.kind](`g.k${i}`)} AS "${name}"`);
  const joins = dimensions
    .map(([, d], i) => (d.dictionary ? ` JOIN ${d.dictionary} d${i} ON d${i}.code = g.k${i}` : ""))
    .join("");
  const metricOutputs = metrics.map(([name, m]) => `${m.sql} AS "${name}"`);
  const orderBy = dimensions.length > 0 ? ` ORDER BY ${dimensions.map(([, d], i) => (d.dictionary ? `d${i}.value` : `g.k${i}`)).join(", ")}` : "";
  const sql =
    `WITH g AS (${grouped}) SELECT ${[...outputs, ...metricOutputs, "CAST(COUNT(*) OVER () AS DOUBLE) AS total_rows"].join(", ")} ` +
    `FROM g${joins}${orderBy} LIMIT ${params.add(query.limit, INTEGER)}`;
  const columns: OutputColumn[] = [
    ...dimensions.map(([name, d]) => ({ name, kind: d.kind, dictionary: d.dictionary })),
    ...metrics.map(([name]) => ({ name, kind: "number" as const })),
  ];
  return { sql, values: params.values, types: params.types, columns };
}
