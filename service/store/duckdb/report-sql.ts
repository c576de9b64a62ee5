/**
 * A report plan (../plan.ts) as DuckDB SQL. Every value is a bound parameter; the only text
 * spliced into the SQL is names from the report model (table, column and field names that match
 * `^[a-z][a-z0-9_]*$`, checked by the spec's meta-schema) and numbers of the model (scales,
 * decimals). fixed-plans.ts may run the sums and grouped columns with the values (integers,
 * dates, timestamps) spliced in as literals instead.
 *
 * Shape: the plan's parts (each a time range of one table, with scope and filters) → one
 * aggregation by the dimensions (none when the plan's rows are already one per group) → the rows, the dictionaries joined for names and sorting, each
 * row's JSON made by `json_object`. A report without dimensions is one row. A report with
 * dimensions is a `SELECT … ORDER BY … LIMIT` of one JSON text per row that DuckDB's CSV writer
 * copies to a file in order, each row ended by a comma (report.ts); JS never builds an object per
 * row. A report without dimensions selects only its counters' sums, from which JS computes and
 * writes the metrics as the SQL here and `json_object` would (json-text.ts): DuckDB binds and
 * plans a statement with bound values again at every run, and the metric expressions and
 * `json_object` were most of that.
 */
import { DATE, INTEGER, TIMESTAMP, DuckDBDateValue, DuckDBTimestampValue, type DuckDBType, type DuckDBValue } from "@duckdb/node-api";
import { reportModel, type ReportMetricTable } from "@adxkit/bindings/reports";
import type { PlanPart, ReportPlan } from "../plan.js";
import { columnOf, dictionaryOf, TIME_COLUMN, tableOf } from "./layout.js";

/**
 * A report ready to run. `row`: one row, the sums of the plan's counters in their order (NULL when
 * no row was summed). `copy`: `select` gives the rows' JSON texts
 * to copy (one column), in order and cut at the limit (the last value); `count` (the values
 * without the limit) counts them before the limit.
 */
export type ReportSql =
  | { kind: "row"; sql: string; values: DuckDBValue[]; types: DuckDBType[] }
  | { kind: "copy"; select: string; count: string; values: DuckDBValue[]; types: DuckDBType[]; columns?: ReportColumnsSql };

/**
 * The same report's grouped rows as columns, unordered and uncut, for JS to sort and write
 * (report-rows.ts): one column per dimension (a day as DATE, an hour as epoch milliseconds, a
 * string as its dictionary code, a code as itself), then the sum of each of the plan's counters
 * as a DOUBLE (`sums` says how each is read), from which JS computes the metrics as `metrics`
 * says (metric-columns.ts): DuckDB binding and planning the metric expressions and the grouping's
 * CTE was ~0.7 of its ~1.8 ms for the month by date × country (docs/benchmarks.md). For a plan
 * whose rows the writer merges (`rowsMergedByWriter`), the rows ungrouped: a group may be several.
 * Its values are the copy's values less the limit (the last).
 */
export interface ReportColumnsSql {
  sql: string;
  sums: MetricColumn[];
  metrics: MetricColumn[];
}

/**
 * How a metric's DOUBLE column is written: a count's sum as an integer; a metric rounded to d
 * decimals as N = floor(x × 10^d + 0.5), written as N / 10^d (json-numbers.ts); any other as the
 * double it is.
 */
export type MetricColumn = { kind: "integer" } | { kind: "scaled"; decimals: number } | { kind: "double" };

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

const DAY_MS = 86_400_000;
const timestamp = (millis: number) => new DuckDBTimestampValue(BigInt(millis) * 1000n);
const date = (millis: number) => new DuckDBDateValue(Math.floor(millis / DAY_MS));

/** `floor(x × 10^d + 0.5) / 10^d`: half up, written the same way by both engines. */
const roundHalfUp = (x: string, decimals: number) => `floor(${x} * 1e${decimals} + 0.5) / 1e${decimals}`;

/**
 * A metric over the aggregated row `g` (its sums never NULL: `renderReport` makes a sum of no
 * rows 0 once, in `g`, which costs DuckDB's planner less than a COALESCE at every use): a plain
 * count as an integer, anything else a DOUBLE, 0-denominators giving `zero`.
 */
export function metricSql(m: ReportMetricTable, zero: number): string {
  if (m.integer) return `g.${m.numerator}`;
  let x = `CAST(g.${m.numerator} AS DOUBLE)`;
  if (m.scale !== 1) x = `${x} * ${m.scale}`;
  if (m.denominator !== undefined) x = `${x} / CAST(g.${m.denominator} AS DOUBLE)`;
  const value = m.decimals === undefined ? x : roundHalfUp(x, m.decimals);
  return m.denominator === undefined ? value : `CASE WHEN g.${m.denominator} = 0 THEN CAST(${zero} AS DOUBLE) ELSE ${value} END`;
}

/**
 * A metric's column for JS to write (`MetricColumn`), or undefined when it cannot be written the
 * same way (a zero-denominator value that is not a whole number of 10^-d).
 */
export function metricColumnSql(m: ReportMetricTable, zero: number): { sql: string; column: MetricColumn } | undefined {
  if (m.integer) return { sql: `CAST(g.${m.numerator} AS DOUBLE)`, column: { kind: "integer" } };
  if (m.decimals === undefined) return { sql: metricSql(m, zero), column: { kind: "double" } };
  const zeroScaled = zero * 10 ** m.decimals;
  if (!Number.isInteger(zeroScaled)) return undefined;
  let x = `CAST(g.${m.numerator} AS DOUBLE)`;
  if (m.scale !== 1) x = `${x} * ${m.scale}`;
  if (m.denominator !== undefined) x = `${x} / CAST(g.${m.denominator} AS DOUBLE)`;
  const scaled = `floor(${x} * 1e${m.decimals} + 0.5)`;
  const sql = m.denominator === undefined ? scaled : `CASE WHEN g.${m.denominator} = 0 THEN CAST(${zeroScaled} AS DOUBLE) ELSE ${scaled} END`;
  return { sql, column: { kind: "scaled", decimals: m.decimals } };
}

/** The dictionary codes of string values, by dimension (a value without a code is in no fact). */
export type CodesOf = (dimension: string, values: readonly string[]) => readonly number[];

/**
 * Renders a plan; the part a table contributes reads only the columns the report needs. String
 * values of the scope and filters are compared as their dictionary codes (`codesOf`, looked up
 * before), so the fact tables are filtered on integers alone.
 */
export function renderReport(plan: ReportPlan, codesOf: CodesOf): ReportSql {
  const params = new Parameters();

  // Scope and filters, bound once and shared by every part.
  const conditions: string[] = [];
  const among = (dimension: string, values: readonly number[]) =>
    values.length === 0 ? "FALSE" : `s.${columnOf(dimension)} IN (${values.map((v) => params.add(v, INTEGER)).join(", ")})`;
  conditions.push(among(plan.scope.dimension, codesOf(plan.scope.dimension, plan.scope.values)));
  for (const filter of plan.filters) {
    conditions.push(among(filter.dimension, filter.type === "string" ? codesOf(filter.dimension, filter.values as string[]) : (filter.values as number[])));
  }
  const where = conditions.map((c) => ` AND ${c}`).join("");

  const key = (part: PlanPart | undefined, i: number): string => {
    const d = plan.dimensions[i];
    if (d.type === "hour") return "s.hour";
    if (d.type === "day") return part?.table.grain === "day" ? "s.day" : "CAST(s.hour AS DATE)";
    return `s.${columnOf(d.name)}`;
  };
  const project = (part: PlanPart | undefined) => [...plan.dimensions.map((_, i) => `${key(part, i)} AS k${i}`), ...plan.counters.map((c) => `s.${c} AS ${c}`)].join(", ");
  const parts = plan.parts.map((part) => {
    const time = TIME_COLUMN[part.table.grain];
    const [from, to] = part.table.grain === "hour" ? [params.add(timestamp(part.from), TIMESTAMP), params.add(timestamp(part.to), TIMESTAMP)] : [params.add(date(part.from), DATE), params.add(date(part.to), DATE)];
    return `SELECT ${project(part)} FROM ${tableOf(part.table)} s WHERE s.${time} BETWEEN ${from} AND ${to}${where}`;
  });
  // No hour in the range: nothing to read, yet a report without dimensions still has its zero row.
  if (parts.length === 0) parts.push(`SELECT ${project(undefined)} FROM ${plan.side}_hourly s WHERE FALSE${where}`);

  const from = `FROM (${parts.join(" UNION ALL ")})`;
  if (plan.dimensions.length === 0) {
    // One row of sums, always (NULL where no row was summed: JS reads it as 0): no sorting, counting or limit to do.
    return { kind: "row", sql: `SELECT ${plan.counters.map((c) => `SUM(${c}) AS ${c}`).join(", ")} ${from}`, values: params.values, types: params.types };
  }
  const keys = plan.dimensions.map((_, i) => `k${i}`);
  // Rows already one per group (plan.ts, rowsAreGroups) are read as they are: the grouping was ~6 of 13.6 ms of the 31,000-row month's statement.
  const grouped = plan.rowsAreGroups
    ? `SELECT ${[...keys, ...plan.counters].join(", ")} ${from}`
    : `SELECT ${[...keys, ...plan.counters.map((c) => `COALESCE(SUM(${c}), 0) AS ${c}`)].join(", ")} ${from} GROUP BY ${keys.join(", ")}`;

  // Strings leave as names (joined only here, after grouping); hours as text, days as DATEs,
  // which json_object writes as YYYY-MM-DD itself (cheaper than strftime per row).
  const joins = plan.dimensions.map((d, i) => (d.type === "string" ? ` JOIN ${dictionaryOf(d.name)} d${i} ON d${i}.code = g.k${i}` : "")).join("");
  const field = (i: number) => {
    const d = plan.dimensions[i];
    if (d.type === "string") return `d${i}.value`;
    if (d.type === "hour") return `strftime(g.k${i}, '%Y-%m-%dT%H:%M:%S')`;
    return `g.k${i}`;
  };
  // One column: each row's JSON object, its keys in this order.
  const pairs = [...plan.dimensions.map((d, i) => `'${d.name}', ${field(i)}`), ...plan.metrics.map((m) => `'${m.name}', ${metricSql(m, plan.zeroDenominator)}`)];
  const order = plan.dimensions.map((d, i) => (d.type === "string" ? `d${i}.value` : `g.k${i}`)).join(", ");
  const count = `WITH g AS (${grouped}) SELECT count(*) FROM g${joins}`;
  const columns = columnsSql(plan, from);
  const select = `WITH g AS (${grouped}) SELECT json_object(${pairs.join(", ")}) AS row FROM g${joins} ORDER BY ${order} LIMIT ${params.add(plan.limit, INTEGER)}`;
  return { kind: "copy", select, count, values: params.values, types: params.types, columns };
}

/** The grouped rows as columns (`ReportColumnsSql`), or undefined when a metric cannot be one. */
function columnsSql(plan: ReportPlan, from: string): ReportColumnsSql | undefined {
  const metrics = plan.metrics.map((m) => metricColumnSql(m, plan.zeroDenominator));
  if (metrics.some((m) => m === undefined)) return undefined;
  const keys = plan.dimensions.map((d, i) => (d.type === "hour" ? `CAST(epoch_ms(k${i}) AS DOUBLE)` : `k${i}`));
  // A count's sum read as an integer (past 2^53 DuckDB writes the report), money's as the double it is.
  const money = new Set(reportModel.counters.filter((c) => c.type === "money").map((c) => c.name));
  const sums = plan.counters.map((c): MetricColumn => (money.has(c) ? { kind: "double" } : { kind: "integer" }));
  const groups = plan.dimensions.map((_, i) => `k${i}`).join(", ");
  // Rows one per group, or merged by the writer once ordered (plan.ts, `rowsMergedByWriter`): each row's counters as they are.
  return {
    sql: plan.rowsAreGroups || plan.rowsMergedByWriter
      ? `SELECT ${[...keys, ...plan.counters.map((c) => `CAST(${c} AS DOUBLE)`)].join(", ")} ${from}`
      : `SELECT ${[...keys, ...plan.counters.map((c) => `CAST(SUM(${c}) AS DOUBLE)`)].join(", ")} ${from} GROUP BY ${groups}`,
    sums,
    metrics: metrics.map((m) => m!.column),
  };
}
