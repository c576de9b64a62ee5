/**
 * A report plan (../plan.ts) as ClickHouse SQL: bound parameters on current servers, literals
 * made by `quoteString` or checked integers on 18.x (sql.ts). Spliced text is only names of the
 * report model and its numbers. The metrics are computed in SQL exactly as the DuckDB rendering
 * computes them (IEEE division of the sums, then `floor(x × 10^d + 0.5) / 10^d`), and the server
 * writes each row as JSON (JSONEachRow), so JS only joins lines. Billed impressions, a row per
 * billing token (billed.ts), are read beside the facts over the whole range, with FINAL.
 */
import type { ReportMetricTable } from "@adxkit/bindings/reports";
import { nextPeriod, type PlanPart, type ReportPlan } from "../plan.js";
import { billedTable } from "./billed.js";
import type { ClickHouseConnection } from "./connection.js";
import type { SqlValues } from "./sql.js";

/** The rows query (sorted, limited) and the count query (the same groups, counted). */
export interface ReportSql {
  sql: string;
  countSql: string;
  values: SqlValues;
}

const UINT32_MAX = 4_294_967_295;
const HOUR_MS = 3_600_000;
/** Epoch seconds, clamped to what DateTime holds: no fact is older than 1970 or newer than 2106. */
const clampSeconds = (ms: number) => Math.max(0, Math.min(UINT32_MAX, Math.floor(ms / 1000)));
const dayText = (ms: number) => new Date(Math.max(0, ms)).toISOString().slice(0, 10);

/** A metric over the summed columns `s_<counter>`; the same arithmetic as duckdb/report-sql.ts. */
export function metricSql(m: ReportMetricTable, zero: number): string {
  if (m.integer) return `s_${m.numerator}`;
  let x = `toFloat64(s_${m.numerator})`;
  if (m.scale !== 1) x = `${x} * ${m.scale}`;
  if (m.denominator !== undefined) x = `${x} / toFloat64(s_${m.denominator})`;
  const value = m.decimals === undefined ? x : `floor(${x} * 1e${m.decimals} + 0.5) / 1e${m.decimals}`;
  return m.denominator === undefined ? value : `if(s_${m.denominator} = 0, toFloat64(${zero}), ${value})`;
}

/** Renders a plan against the store's database. */
export function renderReport(connection: Pick<ClickHouseConnection, "values" | "table">, plan: ReportPlan): ReportSql {
  const values = connection.values();
  const list = (items: readonly (string | number)[], type: "String" | "UInt32") => items.map((v) => values.add(v, type)).join(", ");
  const conditions = [plan.scope.values.length === 0 ? "0" : `${plan.scope.dimension} IN (${list(plan.scope.values, "String")})`];
  for (const filter of plan.filters) conditions.push(`${filter.dimension} IN (${list(filter.values, filter.type === "code" ? "UInt32" : "String")})`);
  const where = conditions.map((c) => ` AND ${c}`).join("");

  const key = (part: PlanPart | undefined, i: number): string => {
    const d = plan.dimensions[i];
    if (d.type === "day") return part?.table.grain === "day" ? "day" : "toDate(hour)";
    return d.type === "hour" ? "hour" : d.name;
  };
  const project = (part: PlanPart | undefined) => [...plan.dimensions.map((_, i) => `${key(part, i)} AS k${i}`), ...plan.counters.map((c) => `${c} AS v_${c}`)].join(", ");
  const hourly = (table: string, part: PlanPart) =>
    `SELECT ${project(part)} FROM ${table} WHERE hour BETWEEN toDateTime(${values.add(clampSeconds(part.from), "UInt32")}) AND toDateTime(${values.add(clampSeconds(part.to), "UInt32")})${where}`;
  const parts = plan.parts.map((part) => {
    const table = connection.table(`${part.table.side}_${part.table.name}`);
    if (part.table.grain === "hour") return hourly(table, part);
    const time = part.table.grain === "day" ? "day" : "month";
    return `SELECT ${project(part)} FROM ${table} WHERE ${time} BETWEEN toDate(${values.add(dayText(part.from), "String")}) AND toDate(${values.add(dayText(part.to), "String")})${where}`;
  });
  if (parts.length > 0) {
    // The billed impressions of the whole range, hour by hour (no rollup holds them), one row per token.
    const last = plan.parts[plan.parts.length - 1];
    const range: PlanPart = { table: { ...last.table, name: "billed", grain: "hour" }, from: plan.parts[0].from, to: nextPeriod(last.table.grain, last.to) - HOUR_MS };
    parts.push(hourly(`${connection.table(billedTable(plan.side))} FINAL`, range));
  }
  // No hour in the range: nothing to read, yet a report without dimensions still has its zero row.
  if (parts.length === 0) parts.push(`SELECT ${project(undefined)} FROM ${connection.table(`${plan.side}_hourly`)} WHERE 0${where}`);
  const source = parts.join(" UNION ALL ");

  const keys = plan.dimensions.map((_, i) => `k${i}`);
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.join(", ")}` : "";
  const grouped = `SELECT ${[...keys, ...plan.counters.map((c) => `sum(v_${c}) AS s_${c}`)].join(", ")} FROM (${source})${groupBy}`;
  const field = (i: number) => {
    const d = plan.dimensions[i];
    if (d.type === "day") return `toString(k${i})`;
    if (d.type === "hour") return `formatDateTime(k${i}, '%Y-%m-%dT%H:%M:%S')`;
    return `k${i}`;
  };
  const outputs = [...plan.dimensions.map((d, i) => `${field(i)} AS \`${d.name}\``), ...plan.metrics.map((m) => `${metricSql(m, plan.zeroDenominator)} AS \`${m.name}\``)];
  const orderBy = keys.length > 0 ? ` ORDER BY ${keys.join(", ")}` : "";
  // The limit is a checked integer of the plan (1..50,000), a literal on every server.
  const sql = `SELECT ${outputs.join(", ")} FROM (${grouped})${orderBy} LIMIT ${Number(plan.limit)}`;
  const countSql = `SELECT count() AS total FROM (SELECT ${keys.length > 0 ? keys.join(", ") : "1"} FROM (${source})${groupBy})`;
  return { sql, countSql, values };
}
