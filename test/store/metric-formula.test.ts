// The one metric evaluator (service/store/duckdb/metric-formula.ts) behind both the report without
// dimensions (json-text.ts) and the grouped reports' columns (metric-columns.ts): for the same sums
// the two paths give the same double, a grouped column's N divided by 10^d as the total's is.
import { reportModel } from "@adxkit/bindings/reports";
import { describe, expect, it } from "vitest";
import { duckdbJsonDouble, metricJson, type Sum } from "../../service/store/duckdb/json-text.js";
import { metricColumnsFromSums } from "../../service/store/duckdb/metric-columns.js";
import { metricColumn, metricPower } from "../../service/store/duckdb/metric-formula.js";
import { seededRandom } from "../../service/random.js";

const counters = reportModel.counters.map((c) => c.name);

describe("one metric formula for totals and grouped columns", () => {
  it("gives the total's text and the grouped column's value from the same double, zero denominators included", () => {
    const random = seededRandom(41);
    for (let row = 0; row < 500; row++) {
      const values = counters.map(() => (random() < 0.2 ? 0 : Math.floor(random() * 10 ** Math.floor(random() * 12))));
      const sums = new Map<(typeof counters)[number], Sum>(counters.map((c, k) => [c, values[k]]));
      const columns = metricColumnsFromSums(reportModel.metrics, counters, values.map((v) => Float64Array.of(v)), reportModel.zeroDenominator);
      reportModel.metrics.forEach((m, j) => {
        const power = metricPower(m);
        const fromColumn = power === undefined || m.integer ? columns[j][0] : columns[j][0] / power;
        expect([m.name, metricJson(m, sums, reportModel.zeroDenominator)]).toEqual([m.name, m.integer ? String(fromColumn) : duckdbJsonDouble(fromColumn)]);
      });
    }
  });

  it("gives the caller's value for a zero denominator only", () => {
    const ratio = reportModel.metrics.find((m) => m.denominator !== undefined);
    expect(ratio).toBeDefined();
    expect([...metricColumn(ratio!, metricPower(ratio!), Float64Array.of(5, 0, 0), Float64Array.of(0, 4, 0), 7)]).toEqual([7, 0, 7]);
  });
});
