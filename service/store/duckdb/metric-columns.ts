/**
 * A grouped report's metric columns computed in JS from its counters' sums (report-sql.ts's
 * `ReportColumnsSql`), each value the double `metricColumnSql`'s SQL gives DuckDB: the sum as a
 * double (as DuckDB's cast of it), times the scale, over the denominator (a zero one gives the
 * plan's zero), for a rounded metric N = floor(x × 10^d + 0.5); each step one IEEE operation, in
 * the SQL's order, by metric-formula.ts as for a report without dimensions (json-text.ts). DuckDB planning these
 * expressions cost more than JS computing them for thousands of rows. Checked against DuckDB's
 * own rows by test/store/report-rows.test.ts and test/store/metric-columns.test.ts.
 */
import type { Counter, ReportMetricTable } from "@adxkit/bindings/reports";
import { metricColumn, metricPower } from "./metric-formula.js";

/**
 * Each metric's column (`metrics`' order) from `sums`, the columns of `counters`' sums (one value
 * per row). A plain count's column is its sum's own array.
 */
export function metricColumnsFromSums(metrics: readonly ReportMetricTable[], counters: readonly Counter[], sums: readonly Float64Array[], zero: number): Float64Array[] {
  const sumOf = (counter: Counter) => sums[counters.indexOf(counter)];
  return metrics.map((m) => {
    const numerator = sumOf(m.numerator);
    if (m.integer) return numerator;
    const denominator = m.denominator === undefined ? undefined : sumOf(m.denominator);
    const power = metricPower(m);
    // What a zero denominator gives, scaled as the column is (report-sql.ts checked it is whole).
    const zeroValue = power === undefined ? zero : zero * power;
    return metricColumn(m, power, numerator, denominator, zeroValue);
  });
}
