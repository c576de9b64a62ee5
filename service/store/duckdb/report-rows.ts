/**
 * A report's rows written in JS from DuckDB's grouped columns: read as typed arrays (no JS value
 * per row), then sorted by each dimension's rank and written as the bytes of the JSON array
 * DuckDB's `json_object` and ORDER BY would have made (report-writer.ts). DuckDB then only scans,
 * groups and computes the metrics: making each row's JSON text and sorting those texts was most
 * of a 31,000-row report's DuckDB time, on the one thread a server gives it (docs/benchmarks.md,
 * "The read side, part six").
 *
 * A large report is written on the report writer's thread (report-writer-thread.ts); a small one
 * here, on the event loop, in slices of rows, each a millisecond or two, so the requests waiting
 * behind it are answered between them.
 */
import duckdb from "@duckdb/node-bindings";
import { DuckDBTypeId, type DuckDBConnection, type DuckDBMaterializedResult } from "@duckdb/node-api";
import type { ReportPlan } from "../plan.js";
import type { AnswerBuffer, AnswerBuffers } from "./answer-buffers.js";
import type { DictionaryName, DictionaryNames } from "./dictionary-names.js";
import type { MetricColumn } from "./report-sql.js";
import { OrderedRows, type GroupedRows, type RowsShape } from "./report-writer.js";

export type { GroupedRows } from "./report-writer.js";

/** Reports of more grouped rows than this are ordered and written by DuckDB (report.ts): a sort in JS would hold the event loop too long. */
export const MAX_ROWS_WRITTEN_IN_JS = 100_000;
/** Rows written between two turns of the event loop: about a millisecond's work. */
const SLICE_ROWS = 2048;
/** Days and hours written here: years 1000 to 9999, which `toISOString` writes as DuckDB does. */
const FIRST_MS = Date.UTC(1000, 0, 1);
const LAST_MS = Date.UTC(9999, 11, 31, 23);
const DAY_MS = 86_400_000;

/**
 * Reads the grouped columns of `result` (report-sql.ts's `ReportColumnsSql`) and the names of its
 * string dimensions; undefined when they cannot be written here exactly (a day out of range, a
 * count beyond 2^53, a code with no dictionary value), and DuckDB writes the report instead.
 */
export async function readGroupedRows(connection: DuckDBConnection, result: DuckDBMaterializedResult, plan: ReportPlan, metricColumns: MetricColumn[], names: DictionaryNames): Promise<GroupedRows | undefined> {
  const rows = result.rowCount;
  const dimensions = plan.dimensions.length;
  const keys = plan.dimensions.map((d) => (d.type === "hour" ? new Float64Array(rows) : new Int32Array(rows)));
  const metrics = metricColumns.map(() => new Float64Array(rows));
  const columns = [...keys, ...metrics];
  columns.forEach((column, j) => {
    const want = column instanceof Float64Array ? [DuckDBTypeId.DOUBLE] : [DuckDBTypeId.INTEGER, DuckDBTypeId.DATE];
    if (!want.includes(result.columnTypeId(j))) throw new Error(`report column ${j} is of DuckDB type ${result.columnTypeId(j)}, expected ${want.join(" or ")}`);
  });
  const targets = columns.map((column) => new Uint8Array(column.buffer, column.byteOffset, column.byteLength));
  for (let i = 0, at = 0, n = result.chunkCount; i < n; i++) {
    const chunk = result.getChunk(i);
    const count = chunk.rowCount;
    for (let j = 0; j < columns.length; j++) {
      const width = columns[j].BYTES_PER_ELEMENT;
      targets[j].set(duckdb.vector_get_data(duckdb.data_chunk_get_vector(chunk.chunk, j), count * width), at * width);
    }
    at += count;
  }
  for (let d = 0; d < dimensions; d++) {
    const type = plan.dimensions[d].type;
    if (type !== "day" && type !== "hour") continue;
    const scale = type === "day" ? DAY_MS : 1;
    for (const value of keys[d]) if (!(value * scale >= FIRST_MS && value * scale <= LAST_MS)) return undefined;
  }
  for (let m = 0; m < metrics.length; m++) {
    if (metricColumns[m].kind !== "integer") continue;
    for (const value of metrics[m]) if (!Number.isSafeInteger(value)) return undefined;
    // Rows the writer merges: every sum of them exact while their absolute values add up to a safe integer
    // (a partial sum past 2^53 leaves the total, rounded up or not, at 2^53 or more).
    if (plan.rowsMergedByWriter) {
      let total = 0;
      for (const value of metrics[m]) total += Math.abs(value);
      if (!Number.isSafeInteger(total)) return undefined;
    }
  }
  const dimensionNames: (Map<number, DictionaryName> | undefined)[] = [];
  for (let d = 0; d < dimensions; d++) {
    if (plan.dimensions[d].type !== "string") {
      dimensionNames.push(undefined);
      continue;
    }
    const found = await names.namesOf(connection, plan.dimensions[d].name, keys[d] as Int32Array);
    if (found === undefined) return undefined;
    dimensionNames.push(found);
  }
  return { kind: "grouped", rows, keys, names: dimensionNames, metrics, metricColumns };
}

/** Lets the event loop answer what waits (sockets, timers) before the next slice of work. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The shape of a plan's answer, as the writer needs it (report-writer.ts). */
export function rowsShape(plan: ReportPlan): RowsShape {
  return { dimensions: plan.dimensions.map(({ name, type }) => ({ name, type })), metrics: plan.metrics.map((m) => m.name), limit: plan.limit };
}

/**
 * Writes grouped rows on the event loop, in slices, as the report's JSON array (its first
 * `plan.limit` rows, in order) into a buffer of `buffers`; `groups`: how many rows before the cut.
 */
export async function writeReportRows(grouped: GroupedRows, plan: ReportPlan, buffers: AnswerBuffers): Promise<AnswerBuffer & { groups: number }> {
  const ordered = await OrderedRows.of(grouped, rowsShape(plan), nextTurn);
  const answer = buffers.take(ordered.bytes);
  const bytes = answer.bytes;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  bytes[at++] = 0x5b;
  for (let start = 0; start < ordered.shown; start += SLICE_ROWS) {
    await nextTurn();
    at = ordered.write(bytes, view, at, start, Math.min(ordered.shown, start + SLICE_ROWS));
  }
  bytes[at++] = 0x5d;
  return { bytes: bytes.subarray(0, at), release: answer.release, groups: ordered.groups };
}
