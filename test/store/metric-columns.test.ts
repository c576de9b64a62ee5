// A grouped report's metric columns computed in JS from its counters' sums
// (service/store/duckdb/metric-columns.ts): the same doubles as the SQL of metricColumnSql.
import { reportModel, type ReportMetricTable } from "@adxkit/bindings/reports";
import { beforeAll, describe, expect, it } from "vitest";
import { useMemoryDuckdb } from "./memory-duckdb.js";
import { metricColumnsFromSums } from "../../service/store/duckdb/metric-columns.js";
import { metricColumnSql } from "../../service/store/duckdb/report-sql.js";
import { seededRandom } from "../../service/random.js";

const duckdb = useMemoryDuckdb();

const counters = reportModel.counters.map((c) => c.name);
const money = new Set(reportModel.counters.filter((c) => c.type === "money").map((c) => c.name));

/** Sums of many magnitudes, zeros (zero denominators) and a count past 2^53, as rows of SQL values. */
function sampleSums(count: number): string[][] {
  const random = seededRandom(23);
  const rows = Array.from({ length: count }, (_, row) =>
    counters.map((c) => (row % 5 === 0 && random() < 0.5 ? "0" : money.has(c) ? String(random() * 10 ** Math.floor(random() * 12)) : String(Math.floor(random() * 10 ** Math.floor(random() * 15))))),
  );
  rows.push(counters.map(() => "9007199254740993"));
  return rows;
}

/** Each metric's column as DuckDB computes it from the sums, and the sums as DOUBLE columns (what report-sql.ts selects). */
async function fromDuckDB(metrics: readonly ReportMetricTable[], zero: number): Promise<{ expected: Float64Array[]; sums: Float64Array[] }> {
  const columns = metrics.map((m) => metricColumnSql(m, zero)!.sql);
  const reader = await duckdb().runAndReadAll(`SELECT ${[...columns, ...counters.map((c) => `CAST(g.${c} AS DOUBLE)`)].join(", ")} FROM sums g ORDER BY i`);
  const rows = reader.getRows() as number[][];
  const column = (j: number) => Float64Array.from(rows, (row) => row[j]);
  return { expected: metrics.map((_, j) => column(j)), sums: counters.map((_, k) => column(metrics.length + k)) };
}

describe("metric columns from the counters' sums", () => {
  beforeAll(async () => {
    await duckdb().run(`CREATE TABLE sums (i INTEGER, ${counters.map((c) => `${c} ${money.has(c) ? "DOUBLE" : "HUGEINT"}`).join(", ")})`);
    await duckdb().run(`INSERT INTO sums VALUES ${sampleSums(3000).map((row, i) => `(${i}, ${row.join(", ")})`).join(", ")}`);
  });

  it("are the doubles the SQL computes, for every metric of the model, zero denominators included", async () => {
    const { expected, sums } = await fromDuckDB(reportModel.metrics, reportModel.zeroDenominator);
    const computed = metricColumnsFromSums(reportModel.metrics, counters, sums, reportModel.zeroDenominator);
    reportModel.metrics.forEach((m, j) => expect([m.name, [...computed[j]]]).toEqual([m.name, [...expected[j]]]));
  });

  it("give a zero denominator's value scaled as the column is, for another zero", async () => {
    const zero = 2.5;
    const ratios = reportModel.metrics.filter((m) => m.denominator !== undefined);
    expect(ratios.length).toBeGreaterThan(0);
    const { expected, sums } = await fromDuckDB(ratios, zero);
    const computed = metricColumnsFromSums(ratios, counters, sums, zero);
    ratios.forEach((m, j) => expect([m.name, [...computed[j]]]).toEqual([m.name, [...expected[j]]]));
  });
});
