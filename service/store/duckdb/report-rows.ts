/**
 * A report's rows written in JS from DuckDB's grouped columns: read as typed arrays (no JS value
 * per row), sorted by each dimension's rank, and written as the bytes of the JSON array DuckDB's
 * `json_object` and ORDER BY would have made (json-numbers.ts; the strings' JSON comes from
 * DuckDB, dictionary-names.ts). DuckDB then only scans, groups and computes the metrics: making
 * each row's JSON text and sorting those texts was most of a 31,000-row report's DuckDB time,
 * on the one thread a server gives it (docs/benchmarks.md, "The read side, part six").
 *
 * The writing runs on the event loop in slices of rows, each a millisecond or two, so the
 * requests waiting behind a heavy report are answered between them.
 */
import duckdb from "@duckdb/node-bindings";
import { DuckDBTypeId, type DuckDBConnection, type DuckDBMaterializedResult } from "@duckdb/node-api";
import type { ReportPlan } from "../plan.js";
import type { AnswerBuffer, AnswerBuffers } from "./answer-buffers.js";
import type { DictionaryName, DictionaryNames } from "./dictionary-names.js";
import { writeAscii, writeInteger, writeScaled } from "./json-numbers.js";
import { duckdbJsonDouble } from "./json-text.js";
import type { MetricColumn } from "./report-sql.js";

/** A report's grouped rows, read from DuckDB, to be sorted and written by `writeReportRows`. */
export interface GroupedRows {
  kind: "grouped";
  rows: number;
  /** Per dimension: a day (days since 1970) or a code as Int32; an hour as epoch milliseconds. */
  keys: (Int32Array | Float64Array)[];
  /** Per dimension: the names of a string dimension's codes. */
  names: (Map<number, DictionaryName> | undefined)[];
  metrics: Float64Array[];
  metricColumns: MetricColumn[];
}

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
    if (metricColumns[m].kind === "integer") for (const value of metrics[m]) if (!Number.isSafeInteger(value)) return undefined;
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

/** One dimension's values ranked in the report's order, and each rank's bytes in a row. */
interface RankedDimension {
  ranks: Int32Array;
  /** How many distinct values. */
  size: number;
  /**
   * Every rank's bytes (`{"name":value` for the first dimension, else `,"name":value`), each
   * from a word boundary, copied four bytes at a time: rank r's from word `starts[r]`…
   */
  words: Uint32Array;
  starts: Int32Array;
  /** …and `lengths[r]` bytes long. */
  lengths: Int32Array;
  /** The longest rank's bytes. */
  longest: number;
}

/** The text of a dimension's value in a row. */
function valueText(type: string, value: number, names: Map<number, DictionaryName> | undefined): Uint8Array {
  if (type === "string") return names!.get(value)!.json;
  if (type === "day") return Buffer.from(`"${new Date(value * DAY_MS).toISOString().slice(0, 10)}"`);
  if (type === "hour") return Buffer.from(`"${new Date(value).toISOString().slice(0, 19)}"`);
  return Buffer.from(String(value));
}

/** Integer keys spanning at most this many values are ranked through an array, others through a Map. */
const MAX_ARRAY_SPAN = 1 << 22;

/** A column's distinct values (in no particular order) and a function giving each row's rank once they are ordered. */
function distinctValues(column: Int32Array | Float64Array): { distinct: number[]; ranksIn: (ordered: number[]) => Int32Array } {
  const rows = column.length;
  const ranks = new Int32Array(rows);
  let min = column[0];
  let max = min;
  for (let i = 1; i < rows; i++) {
    if (column[i] < min) min = column[i];
    if (column[i] > max) max = column[i];
  }
  if (column instanceof Int32Array && max - min < MAX_ARRAY_SPAN) {
    // Values as indexes: no hashing per row.
    const rankAt = new Int32Array(max - min + 1).fill(-1);
    const distinct: number[] = [];
    for (let i = 0; i < rows; i++) {
      if (rankAt[column[i] - min] < 0) {
        rankAt[column[i] - min] = 0;
        distinct.push(column[i]);
      }
    }
    return {
      distinct,
      ranksIn: (ordered) => {
        for (let r = 0; r < ordered.length; r++) rankAt[ordered[r] - min] = r;
        for (let i = 0; i < rows; i++) ranks[i] = rankAt[column[i] - min];
        return ranks;
      },
    };
  }
  const rankOf = new Map<number, number>();
  for (let i = 0; i < rows; i++) rankOf.set(column[i], 0);
  return {
    distinct: [...rankOf.keys()],
    ranksIn: (ordered) => {
      for (let r = 0; r < ordered.length; r++) rankOf.set(ordered[r], r);
      for (let i = 0; i < rows; i++) ranks[i] = rankOf.get(column[i])!;
      return ranks;
    },
  };
}

/** Ranks a dimension's values: strings by their bytes, days, hours and codes ascending. */
function rankDimension(grouped: GroupedRows, plan: ReportPlan, d: number, suffix: string): RankedDimension {
  const { type, name } = plan.dimensions[d];
  const names = grouped.names[d];
  const { distinct, ranksIn } = distinctValues(grouped.keys[d]);
  if (type === "string") distinct.sort((a, b) => Buffer.compare(names!.get(a)!.bytes, names!.get(b)!.bytes));
  else distinct.sort((a, b) => a - b);
  const prefix = Buffer.from(`${d === 0 ? "{" : ","}${JSON.stringify(name)}:`);
  const end = Buffer.from(suffix);
  const texts = distinct.map((value) => Buffer.concat([prefix, valueText(type, value, names), end]));
  const starts = new Int32Array(distinct.length + 1);
  const lengths = new Int32Array(distinct.length);
  let longest = 0;
  for (let r = 0; r < texts.length; r++) {
    lengths[r] = texts[r].length;
    starts[r + 1] = starts[r] + ((texts[r].length + 3) >> 2);
    if (texts[r].length > longest) longest = texts[r].length;
  }
  const words = new Uint32Array(starts[texts.length]);
  const wordBytes = new Uint8Array(words.buffer);
  for (let r = 0; r < texts.length; r++) wordBytes.set(texts[r], starts[r] * 4);
  return { ranks: ranksIn(distinct), size: distinct.length, words, starts, lengths, longest };
}

/**
 * The rows' order: row indexes sorted by their dimensions' ranks, the first dimension first. A
 * counting sort per dimension, the last first (each pass stable): a few linear passes, where a
 * comparison sort of 31,000 rows cost several milliseconds.
 */
function rowOrder(rows: number, dimensions: RankedDimension[]): Uint32Array {
  let order = new Uint32Array(rows);
  for (let i = 0; i < rows; i++) order[i] = i;
  let next = new Uint32Array(rows);
  for (let d = dimensions.length - 1; d >= 0; d--) {
    const { ranks, size } = dimensions[d];
    // Where each rank's rows start, then each row in its rank's place, in the order so far.
    const at = new Int32Array(size + 1);
    for (let i = 0; i < rows; i++) at[ranks[i] + 1]++;
    for (let r = 0; r < size; r++) at[r + 1] += at[r];
    for (let k = 0; k < rows; k++) next[at[ranks[order[k]]]++] = order[k];
    [order, next] = [next, order];
  }
  return order;
}

/** The longest text `writeScaled`, `writeInteger` or `duckdbJsonDouble` gives (`-1.7976931348623157e308`). */
const MAX_NUMBER_BYTES = 24;

/** Lets the event loop answer what waits (sockets, timers) before the next slice of work. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Writes grouped rows as the report's JSON array (its first `plan.limit` rows, in order) into a buffer of `buffers`. */
export async function writeReportRows(grouped: GroupedRows, plan: ReportPlan, buffers: AnswerBuffers): Promise<AnswerBuffer> {
  const metricKeys = plan.metrics.map((m) => `,${JSON.stringify(m.name)}:`);
  // The first metric's key rides on the last dimension's value: one copy fewer per row.
  const dimensions: RankedDimension[] = [];
  for (let d = 0; d < plan.dimensions.length; d++) {
    dimensions.push(rankDimension(grouped, plan, d, d === plan.dimensions.length - 1 ? metricKeys[0] : ""));
    await nextTurn();
  }
  const order = rowOrder(grouped.rows, dimensions);
  const shown = Math.min(grouped.rows, plan.limit);
  // The other metrics' keys, one after the other: metric m's (m ≥ 1) ends at keyEnds[m].
  const keyText = new Uint8Array(Buffer.from(metricKeys.slice(1).join(""), "latin1"));
  const keyEnds = new Int32Array(metricKeys.length);
  for (let m = 1; m < metricKeys.length; m++) keyEnds[m] = keyEnds[m - 1] + metricKeys[m].length;
  // A fragment's last word may write 3 bytes past its end.
  let rowBytes = 2 + keyText.length + MAX_NUMBER_BYTES * metricKeys.length;
  for (const d of dimensions) rowBytes += d.longest + 3;
  const answer = buffers.take(2 + shown * rowBytes);
  const bytes = answer.bytes;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  bytes[at++] = 0x5b;
  for (let start = 0; start < shown; start += SLICE_ROWS) {
    await nextTurn();
    at = writeRows(bytes, view, at, start, Math.min(shown, start + SLICE_ROWS), order, dimensions, grouped, keyText, keyEnds);
  }
  bytes[at++] = 0x5d;
  return { bytes: bytes.subarray(0, at), release: answer.release };
}

/** Writes rows `from` to `to` (in order) at `at`; the offset after them. */
function writeRows(bytes: Uint8Array, view: DataView, at: number, from: number, to: number, order: Uint32Array, dimensions: RankedDimension[], grouped: GroupedRows, keyText: Uint8Array, keyEnds: Int32Array): number {
  const { metrics, metricColumns } = grouped;
  for (let r = from; r < to; r++) {
    const i = order[r];
    if (r > 0) bytes[at++] = 0x2c;
    for (const d of dimensions) {
      const { words, starts } = d;
      const rank = d.ranks[i];
      // Four bytes at a time (little-endian, as the words were filled); what the last word
      // writes past the fragment's end is overwritten by what follows.
      const to = at + d.lengths[rank];
      for (let k = starts[rank], last = starts[rank + 1]; k < last; k++) {
        view.setUint32(at, words[k], true);
        at += 4;
      }
      at = to;
    }
    for (let m = 0; m < metrics.length; m++) {
      if (m > 0) for (let k = keyEnds[m - 1], end = keyEnds[m]; k < end; k++) bytes[at++] = keyText[k];
      const column = metricColumns[m];
      const value = metrics[m][i];
      if (column.kind === "scaled") at = writeScaled(bytes, at, value, column.decimals);
      else if (column.kind === "integer") at = writeInteger(bytes, at, value);
      else at = writeAscii(bytes, at, duckdbJsonDouble(value));
    }
    bytes[at++] = 0x7d;
  }
  return at;
}
