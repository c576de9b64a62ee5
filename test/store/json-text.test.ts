// A report without dimensions computed and written in JS from its counters' sums
// (service/store/duckdb/json-text.ts): the same bytes as the SQL's metrics and json_object.
import { reportModel } from "@adxkit/bindings/reports";
import { describe, expect, it } from "vitest";
import { useMemoryDuckdb } from "./memory-duckdb.js";
import { duckdbJsonDouble, metricsObjectJson, type Sum } from "../../service/store/duckdb/json-text.js";
import { metricSql } from "../../service/store/duckdb/report-sql.js";
import { seededRandom } from "../../service/random.js";

const duckdb = useMemoryDuckdb();

/** Doubles where the notations part: integral values, the switch to exponents both ways, rounding to 6 decimals, extremes. */
const EDGES = [0, -0, 1, -1, 0.5, 1e-6, 1e-7, 1.5e-7, 123e-9, 1e-300, 5e-324, 1e20, 1e21, 1.5e21, 1e22, 2 ** 53, 2 ** 53 + 2, 5006213948, 0.1, 1e-5, 999999999999999900000, 1.7976931348623157e308, 3439559.067213, 0.539539, -2.5e-8];

/** Values of many magnitudes, some rounded to 6 decimals or to integers as the metrics are. */
function sampleDoubles(count: number): number[] {
  const random = seededRandom(18);
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    let x = random() * 10 ** (Math.floor(random() * 60) - 30);
    if (random() < 0.3) x = Math.floor(x * 1e6 + 0.5) / 1e6;
    if (random() < 0.2) x = Math.round(x);
    out.push(random() < 0.1 ? -x : x);
  }
  return out;
}

describe("JSON text as DuckDB writes it", () => {
  it("writes every double as json_object does", async () => {
    const values = [...EDGES, ...sampleDoubles(20_000)];
    await duckdb().run("CREATE TABLE doubles (i INTEGER, x DOUBLE)");
    const appender = await duckdb().createAppender("doubles");
    values.forEach((x, i) => {
      appender.appendInteger(i);
      appender.appendDouble(x);
      appender.endRow();
    });
    appender.closeSync();
    const rows = (await duckdb().runAndReadAll("SELECT i, json_object('x', x)::VARCHAR FROM doubles ORDER BY i")).getRowsJS();
    const differing = rows.filter(([i, text]) => `{"x":${duckdbJsonDouble(values[i as number])}}` !== text).slice(0, 5);
    expect(differing).toEqual([]);
    expect(rows).toHaveLength(values.length);
  });

  it("computes and writes the model's metrics as the SQL and json_object do, zero denominators and large counts included", async () => {
    const counters = reportModel.counters.map((c) => c.name);
    const money = new Set(reportModel.counters.filter((c) => c.type === "money").map((c) => c.name));
    await duckdb().run(`CREATE TABLE sums (${counters.map((c) => `${c} ${money.has(c) ? "DOUBLE" : "HUGEINT"}`).join(", ")})`);
    const random = seededRandom(7);
    const inserts = Array.from({ length: 2000 }, (_, row) =>
      `(${counters.map((c) => (row % 7 === 0 ? "0" : money.has(c) ? String(random() * 10 ** Math.floor(random() * 12)) : String(Math.floor(random() * 10 ** Math.floor(random() * 15))))).join(", ")})`,
    );
    // A sum past 2^53, and the NULL sums of no rows (which the SQL made 0 before the metrics).
    await duckdb().run(`INSERT INTO sums VALUES ${inserts.join(", ")}, (${counters.map(() => "9007199254740993").join(", ")}), (${counters.map(() => "NULL").join(", ")})`);
    const metrics = reportModel.metrics;
    const zero = reportModel.zeroDenominator;
    const json = `json_object(${metrics.map((m) => `'${m.name}', ${metricSql(m, zero)}`).join(", ")})::VARCHAR`;
    const sums = counters.map((c) => `${c} AS raw_${c}, COALESCE(${c}, 0) AS ${c}`).join(", ");
    const rows = (await duckdb().runAndReadAll(`SELECT ${json}, ${counters.map((c) => `raw_${c}`).join(", ")} FROM (SELECT ${sums} FROM sums) g`)).getRows();
    for (const [text, ...read] of rows) expect(metricsObjectJson(metrics, new Map(counters.map((c, i) => [c, read[i] as Sum])), zero)).toBe(text);
    expect(rows).toHaveLength(2002);
  });
});
