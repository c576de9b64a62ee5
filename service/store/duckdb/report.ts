/** Runs a report on one connection and turns DuckDB's answer into plain rows. */
import type { DuckDBConnection, DuckDBVector } from "@duckdb/node-api";
import type { ReportQuery, ReportResult, ReportRow } from "../store.js";
import type { DictionaryNames } from "./names.js";
import { buildReport, type OutputColumn } from "./report-query.js";

const DAY_MS = 86_400_000;
/** Rows printed between yields to the event loop, so a 50,000-row report does not hold it. */
const ROWS_PER_SLICE = 8192;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Prints one kind of output value; the caches hold the few distinct days and hours of a report. */
function printer(column: OutputColumn, names: Map<number, string> | undefined): (value: number) => string | number {
  switch (column.kind) {
    case "day": {
      const cache = new Map<number, string>();
      return (days) => cache.get(days) ?? cache.set(days, new Date(days * DAY_MS).toISOString().slice(0, 10)).get(days)!;
    }
    case "hour": {
      const cache = new Map<number, string>();
      return (ms) => cache.get(ms) ?? cache.set(ms, new Date(ms).toISOString().slice(0, 19)).get(ms)!;
    }
    case "code":
      return (code) => names!.get(code)!;
    default:
      return (n) => n;
  }
}

/** Runs one report (asynchronously, on DuckDB's threads) and prints its rows. */
export async function runReport(connection: DuckDBConnection, names: DictionaryNames, query: ReportQuery): Promise<ReportResult> {
  const { sql, values, types, columns } = buildReport(query);
  const result = await connection.run(sql, values, types);
  // Every output column is numeric (see OutputKind): read the vectors directly.
  const chunks: DuckDBVector[][] = [];
  for (let c = 0; c < result.chunkCount; c++) {
    const chunk = result.getChunk(c);
    if (chunk.rowCount > 0) chunks.push(Array.from({ length: columns.length + 1 }, (_, i) => chunk.getColumnVector(i)));
  }
  // One lookup at a time: a connection runs one statement at a time.
  const printers: ((value: number) => string | number)[] = [];
  for (const [i, column] of columns.entries()) {
    if (column.kind !== "code") {
      printers.push(printer(column, undefined));
      continue;
    }
    const codes = new Set<number>();
    for (const vectors of chunks) for (let r = 0; r < vectors[i].itemCount; r++) codes.add(vectors[i].getItem(r) as number);
    printers.push(printer(column, await names.lookup(connection, column.dictionary!, codes)));
  }
  const rows: ReportRow[] = [];
  let sinceYield = 0;
  for (const vectors of chunks) {
    const count = vectors[0].itemCount;
    if (sinceYield + count > ROWS_PER_SLICE) {
      await yieldToEventLoop();
      sinceYield = 0;
    }
    sinceYield += count;
    for (let r = 0; r < count; r++) {
      const row: ReportRow = {};
      for (let i = 0; i < columns.length; i++) row[columns[i].name] = printers[i](vectors[i].getItem(r) as number);
      rows.push(row);
    }
  }
  const total = chunks.length > 0 ? (chunks[0][columns.length].getItem(0) as number) : 0;
  return { total, rows };
}
