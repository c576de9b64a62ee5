/**
 * Runs a report on one connection: the plan rendered to SQL, DuckDB's answer as JSON bytes.
 *
 * A report with dimensions of up to `maxRowsInJs` grouped rows (100,000 in a server) comes back
 * as DuckDB's grouped columns, which report-rows.ts sorts and writes as JSON in JS once the
 * connection is given back. Beyond that (or a value JS cannot write exactly), DuckDB writes it:
 * it selects one JSON text per row (`json_object`), in order, which DuckDB's
 * CSV writer copies into a file of the connection's (`COPY (SELECT … ORDER BY … LIMIT …) TO …
 * (FORMAT CSV, …)`) with a comma where a line would end: JS reads it back after a `[` and turns
 * the last comma into `]`, the array's bytes without a scan of them on the event loop. DuckDB
 * keeps the ORDER BY's order in what COPY writes (its docs, "Order Preservation"; while
 * `preserve_insertion_order` is on, its default, which adxkit never turns off), so no window
 * numbers the rows and no ordered `string_agg` joins them (docs/benchmarks.md, "The read side",
 * parts three and four). A report without dimensions is one row of its counters' sums, from
 * which JS computes and writes the metrics as the SQL and DuckDB would (json-text.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DuckDBConnection, DuckDBType, DuckDBValue } from "@duckdb/node-api";
import type { ReportPlan } from "../plan.js";
import type { ReportJson } from "../store.js";
import type { AnswerBuffer, AnswerBuffers } from "./answer-buffers.js";
import type { DictionaryCodes } from "./codes.js";
import { metricsObjectJson, type Sum } from "./json-text.js";
import { metricColumnsFromSums } from "./metric-columns.js";
import { renderReport } from "./report-sql.js";
import { rowsOf, runPrepared, runPreparedResult } from "./statements.js";
import type { FixedPlans } from "./fixed-plans.js";
import type { DictionaryNames } from "./dictionary-names.js";
import { readGroupedRows, type GroupedRows } from "./report-rows.js";

const EMPTY_ARRAY = Buffer.from("[]");

/**
 * The files reports are copied through: one per connection (a connection runs one statement at a
 * time), in a folder of the store's own (mode 0700, made by `mkdtemp`), each removed once read.
 */
export class ReportFiles {
  private readonly names = new WeakMap<DuckDBConnection, string>();
  private count = 0;
  /** Made at the first report with dimensions: a store that answers none leaves nothing behind. */
  private dir?: string;

  /** The connection's file: always the same path, so its COPY statement stays prepared. */
  fileOf(connection: DuckDBConnection): string {
    let name = this.names.get(connection);
    if (name === undefined) {
      this.dir ??= mkdtempSync(join(tmpdir(), "adxkit-reports-"));
      this.names.set(connection, (name = join(this.dir, `rows-${++this.count}.json`)));
    }
    return name;
  }

  /** Removes the folder (the store is closing). */
  remove(): void {
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The CSV writer's options that make it write each row's JSON text as it is, followed by a comma:
 * a JSON text never holds the control characters chosen as delimiter and quote (json_object
 * escapes every character below U+0020), so no value is ever quoted or escaped.
 */
const AS_JSON_TEXTS = "(FORMAT CSV, HEADER false, DELIMITER '\x01', QUOTE '\x02', ESCAPE '\x02', NEW_LINE ',')";

/** A SQL string literal. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * Runs one planned report (asynchronously, on DuckDB's threads); its rows come back as the JSON
 * array's bytes, in a buffer of `buffers` when it has many (`release` gives it back), or, for a
 * report with dimensions of up to `maxRowsInJs` rows, as its grouped rows for `writeReportRows`
 * (report-rows.ts) to write once the connection is free.
 */
export async function runReportJson(connection: DuckDBConnection, codes: DictionaryCodes, files: ReportFiles, buffers: AnswerBuffers, plan: ReportPlan, names: DictionaryNames, maxRowsInJs: number, fixed: FixedPlans): Promise<ReportJson | GroupedRows> {
  // The string values the report filters on, as dictionary codes (cached after the first time).
  const wanted = new Map<string, string[]>([[plan.scope.dimension, [...plan.scope.values]]]);
  for (const filter of plan.filters) if (filter.type === "string") wanted.set(filter.dimension, [...(filter.values as string[])]);
  await codes.load(connection, wanted);
  const report = renderReport(plan, (dimension, wantedValues) => codes.codesOf(dimension, wantedValues));
  // The sums and the grouped columns from a plan made with the values as literals where one may be (fixed-plans.ts).
  const run = async (sql: string, values: DuckDBValue[], types: DuckDBType[]) => (await fixed.run(connection, sql, values, types)) ?? runPreparedResult(connection, sql, values, types);
  if (report.kind === "row") {
    const [values] = rowsOf(await run(report.sql, report.values, report.types));
    const sums = new Map(plan.counters.map((counter, i) => [counter, values[i] as Sum]));
    return { total: 1, rowsJson: `[${metricsObjectJson(plan.metrics, sums, plan.zeroDenominator)}]` };
  }
  // Grouped in DuckDB, ordered and written in JS (report-rows.ts), unless too many rows or values it cannot write exactly.
  if (report.columns !== undefined && maxRowsInJs > 0) {
    const result = await run(report.columns.sql, report.values.slice(0, -1), report.types.slice(0, -1));
    if (result.rowCount === 0) return { total: 0, rowsJson: EMPTY_ARRAY };
    if (result.rowCount <= maxRowsInJs) {
      const grouped = await readGroupedRows(connection, result, plan, report.columns.sums, names);
      // Rows not yet one per group: the writer merges them once ordered, then computes the metrics (report-writer.ts).
      if (grouped !== undefined && plan.rowsMergedByWriter) return { ...grouped, metricColumns: report.columns.metrics, merge: { counters: plan.counters, formulas: plan.metrics, zero: plan.zeroDenominator } };
      if (grouped !== undefined) return { ...grouped, metrics: metricColumnsFromSums(plan.metrics, plan.counters, grouped.metrics, plan.zeroDenominator), metricColumns: report.columns.metrics };
    }
  }
  const file = files.fileOf(connection);
  try {
    const [[written]] = await runPrepared(connection, `COPY (${report.select}) TO ${literal(file)} ${AS_JSON_TEXTS}`, report.values, report.types);
    let total = Number(written);
    // Only a report the limit cut needs counting again.
    if (total === plan.limit) total = Number((await runPrepared(connection, report.count, report.values.slice(0, -1), report.types.slice(0, -1)))[0][0]);
    const answer = await readJsonTexts(file, buffers);
    return { total, rowsJson: answer.bytes, release: answer.release };
  } finally {
    await rm(file, { force: true });
  }
}

/** A file of JSON texts each followed by a comma, as the bytes of one JSON array: `[` before, the last comma `]`. */
async function readJsonTexts(file: string, buffers: AnswerBuffers): Promise<AnswerBuffer> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    if (size === 0) return { bytes: EMPTY_ARRAY, release: () => {} };
    // One buffer, read in place: the file's bytes at 1..size, `[` before them.
    const answer = buffers.take(size + 1);
    const { bytes } = answer;
    try {
      bytes[0] = 0x5b;
      for (let at = 0; at < size; ) {
        const { bytesRead } = await handle.read(bytes, 1 + at, size - at, at);
        if (bytesRead === 0) throw new Error(`${file} ended after ${at} of ${size} bytes`);
        at += bytesRead;
      }
      if (bytes[size] !== 0x2c) throw new Error(`${file} does not end with a comma`);
    } catch (error) {
      answer.release();
      throw error;
    }
    bytes[size] = 0x5d;
    return answer;
  } finally {
    await handle.close();
  }
}
