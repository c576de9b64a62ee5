/**
 * A report plan (../plan.ts) as ClickHouse SQL: bound parameters on current servers, literals
 * made by `quoteString` or checked integers on 18.x (sql.ts). Spliced text is only names of the
 * report model and its numbers. The metrics are computed in SQL exactly as the DuckDB rendering
 * computes them (IEEE division of the sums, then `floor(x × 10^d + 0.5) / 10^d`), and the server
 * writes each row as JSON (JSONEachRow), so JS only joins lines. Billed impressions are read
 * beside the facts over the whole range, with FINAL: settled days from their per-day sums
 * (settle.ts), the other hours a row per billing token (billed.ts).
 */
import type { ReportMetricTable, Side } from "@adxkit/bindings/reports";
import { nextPeriod, splitTime, type FactTable, type PlanPart, type ReportPlan } from "../plan.js";
import type { ClickHouseConnection } from "./connection.js";
import { keyColumns } from "./layout.js";
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

/**
 * The parts of the hours `first`..`last` to read billed impressions from: whole days before
 * `settledBefore` (UTC ms, the first unsettled day; 0: none) from the settled sums, every other
 * hour from the billed rows.
 */
export function billedParts(side: Side, first: number, last: number, settledBefore: number): PlanPart[] {
  const rows: FactTable = { side, name: "billed", grain: "hour", dimensions: keyColumns(side) };
  const sums: FactTable = { ...rows, name: "billed_daily", grain: "day" };
  const settled = Math.min(last, settledBefore - HOUR_MS);
  return [...splitTime(first, settled, [sums, rows]), ...splitTime(Math.max(first, settled + HOUR_MS), last, [rows])];
}

/** Renders a plan against the store's database; billed impressions of days before `settledBefore` (UTC ms) are read from their settled sums. */
export function renderReport(connection: Pick<ClickHouseConnection, "values" | "table">, plan: ReportPlan, settledBefore = 0): ReportSql {
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
  const read = (part: PlanPart, final = "") => {
    const table = connection.table(`${part.table.side}_${part.table.name}`) + final;
    if (part.table.grain === "hour") return hourly(table, part);
    const time = part.table.grain === "day" ? "day" : "month";
    return `SELECT ${project(part)} FROM ${table} WHERE ${time} BETWEEN toDate(${values.add(dayText(part.from), "String")}) AND toDate(${values.add(dayText(part.to), "String")})${where}`;
  };
  const parts = plan.parts.map((part) => read(part));
  if (parts.length > 0) {
    // The billed impressions of the whole range (no rollup holds them): settled days' sums, the rest a row per token.
    const last = plan.parts[plan.parts.length - 1];
    const byHour = plan.dimensions.some((d) => d.type === "hour");
    for (const part of billedParts(plan.side, plan.parts[0].from, nextPeriod(last.table.grain, last.to) - HOUR_MS, byHour ? 0 : settledBefore)) parts.push(read(part, " FINAL"));
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
