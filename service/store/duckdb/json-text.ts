/**
 * A report without dimensions answered from its counters' sums: its metrics computed and written
 * in JS exactly as the SQL of report-sql.ts (`metricSql`) computes them and DuckDB's `json_object`
 * writes them, so the answer's bytes stay the same. Binding and planning the metric expressions
 * and `json_object` was most of the statement's cost, which DuckDB pays at every run
 * (docs/benchmarks.md, "The read side, part six"). Checked against DuckDB's own output
 * (test/store/json-text.test.ts).
 */
import type { Counter, ReportMetricTable } from "@adxkit/bindings/reports";
import { metricColumn, metricPower } from "./metric-formula.js";

/**
 * A DOUBLE as DuckDB's JSON writer (yyjson) writes it: the shortest digits that read back as the
 * same double, as JS's `String` gives them, except that an integral value in plain notation keeps
 * `.0` (`1.0`, `-0.0`) and an exponent has no `+` (`1e21`); NaN and the infinities as `NaN`,
 * `Infinity`, `-Infinity` (not JSON: no metric of the model gives them).
 */
export function duckdbJsonDouble(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Object.is(x, -0)) return "-0.0";
  const text = String(x);
  if (text.includes("e")) return text.replace("e+", "e");
  return text.includes(".") ? text : `${text}.0`;
}

/** A sum as node-api reads it: a count's HUGEINT as a bigint, money's DOUBLE as a number; null when no row was summed (0). */
export type Sum = bigint | number | null;

/**
 * A metric's JSON text from the sums, the arithmetic of `metricSql`: a count as its digits; else
 * the numerator as a double (a bigint converts to the nearest double, as DuckDB's cast of a
 * HUGEINT below 2^64 does), times the scale, over the denominator (a zero one gives `zero`),
 * rounded half up as `floor(x × 10^d + 0.5) / 10^d`, each step one IEEE operation as in SQL
 * (metric-formula.ts, shared with the grouped reports' columns).
 */
export function metricJson(m: ReportMetricTable, sums: ReadonlyMap<Counter, Sum>, zero: number): string {
  const numerator = sums.get(m.numerator) ?? 0;
  if (m.integer) return String(numerator);
  const power = metricPower(m);
  const denominator = m.denominator === undefined ? undefined : Float64Array.of(Number(sums.get(m.denominator)));
  // NaN marks a zero denominator: finite sums give no NaN otherwise, and `zero` is written unscaled.
  const x = metricColumn(m, power, Float64Array.of(Number(numerator)), denominator, Number.NaN)[0];
  if (Number.isNaN(x)) return duckdbJsonDouble(zero);
  return duckdbJsonDouble(power === undefined ? x : x / power);
}

/** The row `{"<metric>":<value>,…}` as `json_object` writes it, the metrics in their order. */
export function metricsObjectJson(metrics: readonly ReportMetricTable[], sums: ReadonlyMap<Counter, Sum>, zero: number): string {
  return `{${metrics.map((m) => `${JSON.stringify(m.name)}:${metricJson(m, sums, zero)}`).join(",")}}`;
}
