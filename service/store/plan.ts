/**
 * The engine-neutral plan of one report: everything a report means is decided here, once, from
 * the report model (spec/report-model.yaml) — validation, which rows are the account's, filters,
 * the time range split over the coarsest tables that answer it exactly, grouping, metrics, sort
 * and limit. The engines (duckdb/report-sql.ts, clickhouse/report-sql.ts) only render a plan
 * into SQL with bound values.
 */
import { reportLimits, reportModel, type Counter, type ReportMetricTable, type ReportModelTables, type Side } from "@adxkit/bindings/reports";
import { checkIntegers, checkStrings, invalidQuery as invalid, reportTimeMillis } from "./checks.js";
import type { ReportQuery } from "./store.js";

/** How fine a table's time is: the hourly facts, or a rollup per day or month. */
export type Grain = "hour" | "day" | "month";
const GRAINS: readonly Grain[] = ["hour", "day", "month"];

/** A table of facts: one side's hourly facts or one of its rollups. */
export interface FactTable {
  side: Side;
  /** `hourly`, or the rollup's name. */
  name: string;
  grain: Grain;
  /** The key dimensions it keeps (never the hour), in key order. */
  dimensions: readonly string[];
}

/** A part of the time range and the table it is read from: `from`..`to` are the first and last hour, day or month start (UTC ms). */
export interface PlanPart {
  table: FactTable;
  from: number;
  to: number;
}

/** A dimension rows are grouped by: a key column, or the day or hour of the facts. */
export interface PlannedDimension {
  name: string;
  type: "hour" | "day" | "string" | "code";
}

/** Rows are kept only when the dimension holds one of the values (never empty: an empty filter is no filter). */
export interface PlannedFilter {
  dimension: string;
  type: "string" | "code";
  values: readonly (string | number)[];
}

/** A report as every engine runs it. */
export interface ReportPlan {
  side: Side;
  /** Grouping, in requested order; also the sort order (strings by their bytes, codes and times ascending). */
  dimensions: PlannedDimension[];
  /** Output metrics, in requested order. */
  metrics: ReportMetricTable[];
  /** The counters the metrics read: what each table part sums. */
  counters: Counter[];
  /** The account's own rows: the side's scope dimension holds one of these (none: no rows). */
  scope: { dimension: string; values: readonly string[] };
  filters: PlannedFilter[];
  /** Disjoint, covering exactly the hours of [start, end]; empty when no hour lies in it. */
  parts: PlanPart[];
  limit: number;
  /** Ratios with a zero denominator give this. */
  zeroDenominator: number;
  /**
   * The parts' rows are already one per group (`rowsAreGroups`): the engines select them as they
   * are, without grouping or summing them again.
   */
  rowsAreGroups: boolean;
  /**
   * The parts' rows are one per key and period but for the scope (`rowsMergedByWriter`): an engine
   * may select them ungrouped, for its writer to merge the neighbours of one group once ordered.
   * Never with `rowsAreGroups`.
   */
  rowsMergedByWriter: boolean;
}

export interface PlanOptions {
  /** Read rollups where they answer exactly (default true); false reads only the hourly facts. */
  rollups?: boolean;
  /** The model (tests use a changed one); the generated one by default. */
  model?: ReportModelTables;
  /**
   * Whether a rollup holds one row per key in every period of `from`..`to` (a part's range):
   * an engine whose rollups are compacted says so (duckdb/rollup-periods.ts). Absent: never.
   */
  uniqueRows?: (table: FactTable, from: number, to: number) => boolean;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The first instant of the period of `grain` holding `ms`, and of the next period. */
function periodStart(grain: Grain, ms: number): number {
  if (grain === "hour") return Math.floor(ms / HOUR_MS) * HOUR_MS;
  if (grain === "day") return Math.floor(ms / DAY_MS) * DAY_MS;
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
/** The first instant of the period of `grain` after the one starting at `start`. */
export function nextPeriod(grain: Grain, start: number): number {
  if (grain === "hour") return start + HOUR_MS;
  if (grain === "day") return start + DAY_MS;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/**
 * Splits the hours `first`..`last` (inclusive, on the hour) over the tables: whole periods of the
 * coarsest table first, then its edges with the next finer one, down to single hours.
 */
export function splitTime(first: number, last: number, tables: readonly FactTable[]): PlanPart[] {
  if (first > last) return [];
  const [table, ...finer] = tables;
  if (table.grain === "hour") return [{ table, from: first, to: last }];
  // The first whole period starting at or after `first`, and the last one ending by `last`.
  let from = periodStart(table.grain, first);
  if (from < first) from = nextPeriod(table.grain, from);
  let to = periodStart(table.grain, last);
  if (nextPeriod(table.grain, to) - HOUR_MS > last) to = periodStart(table.grain, to - 1);
  if (from > to) return splitTime(first, last, finer);
  return [
    ...splitTime(first, from - HOUR_MS, finer),
    { table, from, to },
    ...splitTime(nextPeriod(table.grain, to), last, finer),
  ];
}

/** The tables of a side: the hourly facts and its rollups. */
export function factTables(model: ReportModelTables, side: Side): FactTable[] {
  const hourly: FactTable = { side, name: "hourly", grain: "hour", dimensions: model.sides[side].key.slice(1) };
  return [hourly, ...model.rollups.filter((r) => r.side === side).map((r) => ({ side, name: r.name, grain: r.grain, dimensions: r.dimensions }))];
}

/**
 * The identifiers a table keeps besides its side's scope: string dimensions of free values (no
 * pattern), such as apps and placements, thousands per publisher where a country or a code has
 * a few hundred values at most. They, more than the number of dimensions, make a table large.
 */
export function identifiers(table: FactTable, model: ReportModelTables): number {
  const scope = model.sides[table.side].scope;
  return table.dimensions.filter((d) => d !== scope && model.dimensions[d].type === "string" && model.dimensions[d].pattern === undefined).length;
}

/**
 * For each grain a query may read, the smallest table that keeps every dimension it needs
 * (fewest identifiers, then fewest dimensions), coarsest grain first; the hourly facts always last.
 */
function usableTables(tables: readonly FactTable[], needed: ReadonlySet<string>, finest: Grain, model: ReportModelTables): FactTable[] {
  const out: FactTable[] = [];
  for (const grain of [...GRAINS].reverse()) {
    if (GRAINS.indexOf(grain) > GRAINS.indexOf(finest)) continue;
    const fits = tables.filter((t) => t.grain === grain && [...needed].every((d) => t.dimensions.includes(d)));
    fits.sort((a, b) => identifiers(a, model) - identifiers(b, model) || a.dimensions.length - b.dimensions.length);
    if (fits.length > 0) out.push(fits[0]);
  }
  return out;
}

/** The values of the side's scope the query's account owns: `{ <scope>: value }` or `{ <scope>s: [values] }`. */
function scopeValues(query: ReportQuery, scope: string): string[] {
  const given = (query.scope ?? {}) as unknown as Record<string, unknown>;
  if (typeof given[scope] === "string") return [given[scope] as string];
  const many = given[`${scope}s`];
  if (Array.isArray(many)) return checkStrings(`scope.${scope}s`, many);
  invalid(`a ${query.side} query needs scope.${scope} or scope.${scope}s`);
}

/** Plans a report; throws `StoreError` (ADX_ERR_STORE_QUERY_INVALID) for a query the store cannot run. */
export function planReport(query: ReportQuery, options: PlanOptions = {}): ReportPlan {
  const model = options.model ?? reportModel;
  const sides = model.sides as Record<string, (typeof model.sides)[Side]>;
  const side = Object.hasOwn(sides, query.side) ? sides[query.side] : invalid(`unknown side ${JSON.stringify(query.side)}`);
  if (!Array.isArray(query.metrics) || query.metrics.length === 0) invalid("metrics must not be empty");
  const metrics = [...new Set(query.metrics)].map((name) => model.metrics.find((m) => m.name === name) ?? invalid(`unknown metric ${JSON.stringify(name)}`));
  const dimensions = [...new Set<string>(query.dimensions ?? [])].map((name): PlannedDimension => {
    if (!side.dimensions.includes(name as never)) invalid(`dimension ${JSON.stringify(name)} is not available on the ${query.side} side`);
    return { name, type: model.dimensions[name].type };
  });
  const limitMax = reportLimits.limitMax;
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > limitMax) invalid(`limit must be an integer from 1 to ${limitMax}`);
  const startMs = reportTimeMillis("start", query.start);
  const endMs = reportTimeMillis("end", query.end);

  // Filters the side does not offer are ignored (A: interface document 4.1 rule 2); an empty
  // array is no filter at all, as if the parameter were absent, not "match nothing".
  const filters: PlannedFilter[] = [];
  for (const name of side.filters) {
    const given = (query.filters as Record<string, unknown> | undefined)?.[name];
    if (given === undefined || given === null) continue;
    if (!Array.isArray(given)) invalid(`filter ${name} must be an array`);
    if (given.length === 0) continue;
    const type = model.dimensions[name].type === "code" ? "code" : "string";
    filters.push({ dimension: name, type, values: type === "code" ? checkIntegers(name, given) : checkStrings(name, given) });
  }
  const scope = { dimension: side.scope, values: scopeValues(query, side.scope) };

  // Which tables answer exactly: they keep every key dimension the query groups or filters by,
  // and their time is no coarser than the finest time dimension it groups by.
  const needed = new Set([scope.dimension, ...filters.map((f) => f.dimension), ...dimensions.filter((d) => d.type === "string" || d.type === "code").map((d) => d.name)]);
  const finest: Grain = dimensions.some((d) => d.type === "hour") ? "hour" : dimensions.some((d) => d.type === "day") ? "day" : "month";
  const all = factTables(model, query.side);
  const tables = options.rollups === false ? all.slice(0, 1) : usableTables(all, needed, finest, model);
  const first = Math.ceil(startMs / HOUR_MS) * HOUR_MS;
  const last = Math.floor(endMs / HOUR_MS) * HOUR_MS;

  const counters = [...new Set(metrics.flatMap((m) => (m.denominator === undefined ? [m.numerator] : [m.numerator, m.denominator])))];
  const parts = splitTime(first, last, tables);
  const conditions = [scope, ...filters].map((f) => ({ dimension: f.dimension, values: f.values }));
  const unique = rowsAreGroups(parts, dimensions, conditions, options.uniqueRows);
  const merged = !unique && rowsMergedByWriter(parts, dimensions, conditions, scope.dimension, options.uniqueRows, model);
  return { side: query.side, dimensions, metrics, counters, scope, filters, parts, limit: query.limit, zeroDenominator: model.zeroDenominator, rowsAreGroups: unique, rowsMergedByWriter: merged };
}

/**
 * Whether every row the parts read is a group of its own, so that grouping and summing them
 * again changes nothing: each part reads a rollup holding one row per key in its range
 * (`uniqueRows`), and each of the table's key dimensions is grouped by or held to one value by
 * the scope or a filter; its time is grouped by (a day) or the part is one period; and parts
 * are told apart by the day when there are several. A report without dimensions is one sum.
 */
export function rowsAreGroups(
  parts: readonly PlanPart[],
  dimensions: readonly PlannedDimension[],
  conditions: readonly { dimension: string; values: readonly (string | number)[] }[],
  uniqueRows: PlanOptions["uniqueRows"],
  alsoGrouped: readonly string[] = [],
): boolean {
  if (uniqueRows === undefined || dimensions.length === 0 || parts.length === 0) return false;
  const byDay = dimensions.some((d) => d.type === "day");
  if (parts.length > 1 && !byDay) return false;
  const grouped = new Set([...dimensions.map((d) => d.name), ...alsoGrouped]);
  for (const c of conditions) if (new Set(c.values).size === 1) grouped.add(c.dimension);
  return parts.every(
    ({ table, from, to }) =>
      table.grain !== "hour" && (from === to || (table.grain === "day" && byDay)) && table.dimensions.every((d) => grouped.has(d)) && uniqueRows(table, from, to),
  );
}

/**
 * Whether the rows the parts read would be groups of their own (`rowsAreGroups`) if the report
 * also grouped by the scope, and every table keeps an identifier (an app, a placement: as a rule
 * of one publisher): then a group is about one row, rarely more (an app under two of the
 * account's publishers), and the rows may be read ungrouped and merged once ordered, where
 * DuckDB's `GROUP BY` was ~6 of the 31,000-row month's 13.6 ms (docs/benchmarks.md, "The read
 * side, part thirteen"). Without an identifier (a month by date × country over 50 publishers:
 * 50 rows a group) grouping in SQL stays cheaper.
 */
export function rowsMergedByWriter(
  parts: readonly PlanPart[],
  dimensions: readonly PlannedDimension[],
  conditions: readonly { dimension: string; values: readonly (string | number)[] }[],
  scope: string,
  uniqueRows: PlanOptions["uniqueRows"],
  model: ReportModelTables = reportModel,
): boolean {
  return parts.every(({ table }) => identifiers(table, model) > 0) && rowsAreGroups(parts, dimensions, conditions, uniqueRows, [scope]);
}

/**
 * Whether a report reads the facts' detail: the hourly facts, or a daily table keeping an
 * identifier besides the account's scope (an app, a placement). These are the reports whose cost
 * grows with the traffic (a month of the daily rollup by app and country is 179 k rows at the
 * bench's size), unlike those a summary or monthly rollup answers. A server runs these a few at
 * a time (duckdb/store.ts), so they never take every core.
 */
export function readsFactDetail(plan: ReportPlan, model: ReportModelTables = reportModel): boolean {
  return plan.parts.some((part) => part.table.grain === "hour" || (part.table.grain === "day" && identifiers(part.table, model) > 0));
}
