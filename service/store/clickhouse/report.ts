/**
 * Reports on ClickHouse: the same semantics as the DuckDB store (service/store/duckdb/report-query.ts):
 * an hourly fact is included when start ≤ its hour ≤ end; whole days come from the daily
 * rollup, the hours around them from the hourly facts; one aggregation by the requested
 * dimensions; sorted ascending by them (strings by their bytes); derived metrics with 0 for a
 * zero denominator, rounded to 6 decimals; `total` counts the rows before the limit.
 *
 * ClickHouse sums; the derived metrics and the rounding are computed here, from the sums, exactly
 * as DuckDB's SQL does them (IEEE division, then round half up at 6 decimals).
 */
import type { Dimension, Metric, ReportQuery, ReportResult, ReportRow, Side } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";
import type { SqlValues } from "./sql.js";

import { timeRanges } from "../time-ranges.js";
import { checkIntegers, checkStrings, invalidQuery as invalid, reportTimeMillis } from "../checks.js";
/** Largest `limit` (interface document 8). */
export const MAX_LIMIT = 50_000;

type Sum = "request" | "response" | "impression" | "revenue";
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const ratio = (a: number, b: number) => (b === 0 ? 0 : round6(a / b));

const METRICS = new Map<Metric, { needs: Sum[]; value: (g: Record<Sum, number>) => number }>([
  ["revenue", { needs: ["revenue"], value: (g) => round6(g.revenue) }],
  ["request", { needs: ["request"], value: (g) => g.request }],
  ["response", { needs: ["response"], value: (g) => g.response }],
  ["impression", { needs: ["impression"], value: (g) => g.impression }],
  ["fill_rate", { needs: ["response", "request"], value: (g) => ratio(g.response, g.request) }],
  ["render_rate", { needs: ["impression", "response"], value: (g) => ratio(g.impression, g.response) }],
  ["ecpm", { needs: ["revenue", "impression"], value: (g) => (g.impression === 0 ? 0 : round6((g.revenue * 1000) / g.impression)) }],
]);

/** How a dimension is read from each source and how it leaves ClickHouse. */
interface DimensionSql {
  daily: string;
  hourly: string;
  /** The output expression over the grouped key `k`: dates as text, hours as epoch seconds. */
  output: (k: string) => string;
  print: (value: unknown) => string | number;
}

const isoHour = (seconds: unknown) => new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
const column = (name: string): DimensionSql => ({ daily: name, hourly: name, output: (k) => k, print: (v) => v as string | number });
const integer = (name: string): DimensionSql => ({ daily: name, hourly: name, output: (k) => k, print: (v) => Number(v) });

const DIMENSIONS = new Map<Dimension, DimensionSql>([
  ["date", { daily: "day", hourly: "toDate(hour)", output: (k) => `toString(${k})`, print: (v) => v as string }],
  ["date_hour", { daily: "NULL", hourly: "hour", output: (k) => `toUInt32(${k})`, print: isoHour }],
  ["platform", integer("platform")],
  ["ad_format", integer("ad_format")],
  ["app_bundle_id", column("app_bundle_id")],
  ["country", column("country")],
  ["placement_id", column("placement_id")],
  ["publisher_id", column("publisher_id")],
]);

type FilterName = keyof ReportQuery["filters"];

interface SideSql {
  hourly: string;
  daily: string;
  dimensions: ReadonlySet<Dimension>;
  filters: ReadonlyMap<FilterName, "String" | "UInt32">;
}

const SIDES: Record<Side, SideSql> = {
  supply: {
    hourly: "supply_hourly",
    daily: "supply_daily",
    dimensions: new Set(DIMENSIONS.keys()),
    filters: new Map<FilterName, "String" | "UInt32">([
      ["ad_format", "UInt32"],
      ["platform", "UInt32"],
      ["placement_id", "String"],
      ["app_bundle_id", "String"],
      ["country", "String"],
    ]),
  },
  demand: {
    hourly: "demand_hourly",
    daily: "demand_daily",
    dimensions: new Set<Dimension>(["date", "date_hour", "platform", "ad_format"]),
    // Interface document 4.1 rule 2: only ad_format filters demand reports; other names are ignored.
    filters: new Map<FilterName, "String" | "UInt32">([["ad_format", "UInt32"]]),
  },
};


/** Epoch seconds of a time in milliseconds (hours of the facts are whole seconds). */
const seconds = (ms: number) => Math.floor(ms / 1000);
/** Negative bounds clamp to the epoch: no fact is older (fact.ts: years from 1970). */
const clampSeconds = (ms: number) => Math.max(0, Math.min(4_294_967_295, seconds(ms)));
const dayText = (ms: number) => new Date(Math.max(0, ms)).toISOString().slice(0, 10);

/** A report as SQL: the rows query (limited), the count query (the same groups, counted). */
export interface BuiltClickHouseReport {
  sql: string;
  countSql: string;
  values: SqlValues;
  dimensions: [Dimension, DimensionSql][];
  metrics: Metric[];
  sums: Sum[];
  limit: number;
}

/** Builds the SQL of a report; throws `StoreError` (ADX_ERR_STORE_QUERY_INVALID). */
export function buildClickHouseReport(connection: Pick<ClickHouseConnection, "values" | "table">, query: ReportQuery): BuiltClickHouseReport {
  const side = Object.hasOwn(SIDES, query.side) ? SIDES[query.side] : invalid(`unknown side ${JSON.stringify(query.side)}`);
  if (!Array.isArray(query.metrics) || query.metrics.length === 0) invalid("metrics must not be empty");
  const metrics = [...new Set(query.metrics)];
  for (const name of metrics) if (!METRICS.has(name)) invalid(`unknown metric ${JSON.stringify(name)}`);
  const dimensions = [...new Set(query.dimensions ?? [])].map((name) => {
    if (!side.dimensions.has(name)) invalid(`dimension ${JSON.stringify(name)} is not available on the ${query.side} side`);
    return [name, DIMENSIONS.get(name)!] as [Dimension, DimensionSql];
  });
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_LIMIT) invalid(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  const startMs = reportTimeMillis("start", query.start);
  const endMs = reportTimeMillis("end", query.end);

  const values = connection.values();
  const conditions: string[] = [];
  const list = (items: (string | number)[], type: "String" | "UInt32") => items.map((v) => values.add(v, type)).join(", ");

  if (query.side === "demand") {
    const bidder = (query.scope as { bidder_id?: unknown }).bidder_id;
    if (typeof bidder !== "string") invalid("a demand query needs scope.bidder_id");
    conditions.push(`bidder_id = ${values.add(bidder, "String")}`);
  } else {
    const publishers = (query.scope as { publisher_ids?: unknown }).publisher_ids;
    if (!Array.isArray(publishers)) invalid("a supply query needs scope.publisher_ids");
    const ids = checkStrings("scope.publisher_ids", publishers);
    conditions.push(ids.length === 0 ? "0" : `publisher_id IN (${list(ids, "String")})`);
  }

  // An empty array is no filter at all (as if the parameter were absent), not "match nothing".
  for (const [name, type] of side.filters) {
    const given = query.filters?.[name];
    if (given === undefined || given === null) continue;
    if (!Array.isArray(given)) invalid(`filter ${name} must be an array`);
    if (given.length === 0) continue;
    const items = type === "UInt32" ? checkIntegers(name, given) : checkStrings(name, given);
    conditions.push(`${name} IN (${list(items, type)})`);
  }

  const sums = [...new Set(metrics.flatMap((name) => METRICS.get(name)!.needs))];
  const needsHour = dimensions.some(([name]) => name === "date_hour");
  const ranges = timeRanges(startMs, endMs, !needsHour);
  const where = conditions.map((c) => ` AND ${c}`).join("");
  const project = (daily: boolean) =>
    dimensions
      .map(([, d], i) => `${daily ? d.daily : d.hourly} AS k${i}`)
      .concat(sums.map((m) => `${m} AS v_${m}`))
      .join(", ");
  const parts: string[] = [];
  if (ranges.days) {
    const [from, to] = ranges.days;
    parts.push(
      `SELECT ${project(true)} FROM ${connection.table(side.daily)} WHERE day BETWEEN toDate(${values.add(dayText(from), "String")}) AND toDate(${values.add(dayText(to), "String")})${where}`,
    );
  }
  for (const [from, to] of ranges.hours) {
    // A range entirely before the epoch or after 2106 matches nothing; keep the SQL simple.
    const empty = to < 0 || from > to || seconds(from) > 4_294_967_295;
    parts.push(
      `SELECT ${project(false)} FROM ${connection.table(side.hourly)} WHERE ${empty ? "0 AND " : ""}hour BETWEEN toDateTime(${values.add(clampSeconds(from), "UInt32")}) AND toDateTime(${values.add(clampSeconds(to), "UInt32")})${where}`,
    );
  }
  const source = parts.length === 1 ? parts[0] : parts.join(" UNION ALL ");
  const keys = dimensions.map((_, i) => `k${i}`);
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.join(", ")}` : "";
  const aggregates = sums.map((m) => `toFloat64(sum(v_${m})) AS s_${m}`);
  const outputs = dimensions.map(([, d], i) => `${d.output(`k${i}`)} AS o${i}`);
  const orderBy = keys.length > 0 ? ` ORDER BY ${keys.join(", ")}` : "";
  const sql =
    `SELECT ${[...outputs, ...sums.map((m) => `s_${m}`)].join(", ")} FROM (SELECT ${[...keys, ...aggregates].join(", ")} FROM (${source})${groupBy})` +
    `${orderBy} LIMIT ${Number(query.limit)}`;
  const countSql = `SELECT count() AS total FROM (SELECT ${keys.length > 0 ? keys.join(", ") : "1"} FROM (${source})${groupBy})`;
  return { sql, countSql, values, dimensions, metrics, sums, limit: query.limit };
}

/** Runs one report and prints its rows as the DuckDB store does. */
export async function runClickHouseReport(connection: ClickHouseConnection, query: ReportQuery): Promise<ReportResult> {
  const built = buildClickHouseReport(connection, query);
  const raw = await connection.rows<Record<string, unknown>>(built.sql, built.values);
  const rows: ReportRow[] = raw.map((r) => {
    const row: ReportRow = {};
    built.dimensions.forEach(([name, d], i) => (row[name] = d.print(r[`o${i}`])));
    const g = { request: 0, response: 0, impression: 0, revenue: 0 } as Record<Sum, number>;
    for (const m of built.sums) g[m] = Number(r[`s_${m}`]);
    for (const m of built.metrics) row[m] = METRICS.get(m)!.value(g);
    return row;
  });
  // Fewer rows than the limit: they are all of them. Otherwise count the groups.
  let total = rows.length;
  if (built.dimensions.length > 0 && rows.length >= built.limit) {
    const [{ total: counted }] = await connection.rows<{ total: string | number }>(built.countSql, built.values);
    total = Number(counted);
  }
  return { total, rows };
}
