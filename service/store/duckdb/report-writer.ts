/**
 * The writing of a report's grouped rows (report-rows.ts reads them from DuckDB): each dimension
 * ranked, the rows ordered, and the JSON array DuckDB's `json_object` and ORDER BY would have
 * made written as bytes (json-numbers.ts; the strings' JSON comes from DuckDB,
 * dictionary-names.ts). No DuckDB and no event loop here: the same code runs on the event loop
 * in slices (report-rows.ts, small reports) and whole on the report writer's thread
 * (report-writer-worker.ts, large ones).
 */
import type { Counter, ReportMetricTable } from "@adxkit/bindings/reports";
import type { DictionaryName } from "./dictionary-names.js";
import { metricColumnsFromSums } from "./metric-columns.js";
import { writeAscii, writeInteger, writeScaled } from "./json-numbers.js";
import { duckdbJsonDouble } from "./json-text.js";
import type { MetricColumn } from "./report-sql.js";

/** A report's grouped rows, as read from DuckDB. */
export interface GroupedRows {
  kind: "grouped";
  rows: number;
  /** Per dimension: a day (days since 1970) or a code as Int32; an hour as epoch milliseconds. */
  keys: (Int32Array | Float64Array)[];
  /** Per dimension: the names of a string dimension's codes. */
  names: (Map<number, DictionaryName> | undefined)[];
  /** The metrics' columns; with `merge`, the counters' sums of each row read instead. */
  metrics: Float64Array[];
  metricColumns: MetricColumn[];
  /** Rows that are not yet one per group (plan.ts, `rowsMergedByWriter`): merged once ordered, then the metrics computed. */
  merge?: MergedSums;
}

/**
 * How merged rows' sums become the metrics (metric-columns.ts): `GroupedRows.metrics` holds the
 * sums of `counters`, each a count whose column's absolute values add up below 2^53 (checked
 * when read: every sum of them is then exact in a double), or money, added in the order of the
 * rows read, which is the order DuckDB's grouping adds them in on one thread.
 */
export interface MergedSums {
  counters: Counter[];
  formulas: ReportMetricTable[];
  zero: number;
}

/** What the answer's shape takes from the report's plan: plain data, which a thread is sent. */
export interface RowsShape {
  dimensions: { name: string; type: string }[];
  /** The metrics' names, in order. */
  metrics: string[];
  limit: number;
}

const DAY_MS = 86_400_000;

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

/** A code's name (readGroupedRows found one for each: a missing one is a bug, said plainly). */
function nameOf(names: Map<number, DictionaryName>, code: number): DictionaryName {
  const name = names.get(code);
  if (name === undefined) throw new Error(`report rows: no dictionary name for code ${code}`);
  return name;
}

/** The text of a dimension's value in a row. */
function valueText(type: string, value: number, names: Map<number, DictionaryName> | undefined): Uint8Array {
  if (type === "string") return nameOf(names!, value).json;
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
function rankDimension(grouped: GroupedRows, shape: RowsShape, d: number, suffix: string): RankedDimension {
  const { type, name } = shape.dimensions[d];
  const names = grouped.names[d];
  const { distinct, ranksIn } = distinctValues(grouped.keys[d]);
  if (type === "string") distinct.sort((a, b) => Buffer.compare(nameOf(names!, a).bytes, nameOf(names!, b).bytes));
  else distinct.sort((a, b) => a - b);
  const prefix = Buffer.from(`${d === 0 ? "{" : ","}${JSON.stringify(name)}:`);
  const end = Buffer.from(suffix);
  const rankTexts = distinct.map((value) => Buffer.concat([prefix, valueText(type, value, names), end]));
  const starts = new Int32Array(distinct.length + 1);
  const lengths = new Int32Array(distinct.length);
  let longest = 0;
  for (let r = 0; r < rankTexts.length; r++) {
    lengths[r] = rankTexts[r].length;
    starts[r + 1] = starts[r] + ((rankTexts[r].length + 3) >> 2);
    if (rankTexts[r].length > longest) longest = rankTexts[r].length;
  }
  const words = new Uint32Array(starts[rankTexts.length]);
  const wordBytes = new Uint8Array(words.buffer);
  for (let r = 0; r < rankTexts.length; r++) wordBytes.set(rankTexts[r], starts[r] * 4);
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

/**
 * Merges each run of ordered rows with the same key: its sums added in the run's order (`order`
 * is stable, so in the order read) into one row of the merged sums, which come in order. Returns
 * the runs' first rows, in order (the groups), and the merged sums, one per group.
 */
function mergeNeighbours(order: Uint32Array, dimensions: RankedDimension[], sums: Float64Array[]): { firsts: Uint32Array; merged: Float64Array[] } {
  const rows = order.length;
  const firsts = new Uint32Array(rows);
  const merged = sums.map(() => new Float64Array(rows));
  let g = -1;
  let first = 0;
  for (let r = 0; r < rows; r++) {
    const i = order[r];
    let same = r > 0;
    for (let d = 0; d < dimensions.length && same; d++) same = dimensions[d].ranks[i] === dimensions[d].ranks[first];
    if (same) for (let c = 0; c < sums.length; c++) merged[c][g] += sums[c][i];
    else {
      first = firsts[++g] = i;
      for (let c = 0; c < sums.length; c++) merged[c][g] = sums[c][i];
    }
  }
  return { firsts: firsts.subarray(0, g + 1), merged: merged.map((column) => column.subarray(0, g + 1)) };
}

/** How a metric's values are written: `writeScaled`, `writeInteger`, `duckdbJsonDouble`. */
const KIND_SCALED = 0;
const KIND_INTEGER = 1;
const KIND_DOUBLE = 2;

/** `into[r]` = `column[rows[r]]` for each r of `into`: a column's values in the rows' order. */
function gather<T extends Int32Array | Float64Array>(into: T, column: Int32Array | Float64Array, rows: Uint32Array): T {
  for (let r = 0; r < into.length; r++) into[r] = column[rows[r]];
  return into;
}

/**
 * Copies a fragment of `length` bytes, stored as words from `start` to `end`, to `at`; the
 * offset after it. Four bytes at a time (little-endian, as the words were filled): what the last
 * word writes past the fragment's end is overwritten by what follows.
 */
function copyWords(view: DataView, at: number, words: Uint32Array, start: number, end: number, length: number): number {
  for (let k = start, to = at; k < end; k++, to += 4) view.setUint32(to, words[k], true);
  return at + length;
}

/** The longest text `writeScaled`, `writeInteger` or `duckdbJsonDouble` gives (`-1.7976931348623157e308`). */
const MAX_NUMBER_BYTES = 24;

/** Grouped rows ranked and ordered, ready to be written: `bytes` is the most the answer can take. */
export class OrderedRows {
  /** How many groups (rows before the limit's cut). */
  readonly groups: number;
  /** How many rows the answer shows (the limit's cut). */
  readonly shown: number;
  /** An upper bound of the answer's bytes. */
  readonly bytes: number;
  /** Per dimension, the shown rows' ranks in order; per metric, their values in order (written front to back, no row looked up). */
  private readonly rowRanks: Int32Array[];
  private readonly rowMetrics: Float64Array[];
  /** Per metric: how it is written (`KIND_*`) and a scaled one's decimals. */
  private readonly kinds: Int32Array;
  private readonly decimals: Int32Array;
  /** Metric m's key (`,"name":`, m ≥ 1) as words from `keyStarts[m]`, `keyLengths[m]` bytes (as a dimension's rank). */
  private readonly keyWords: Uint32Array;
  private readonly keyStarts: Int32Array;
  private readonly keyLengths: Int32Array;

  private constructor(
    grouped: GroupedRows,
    shape: RowsShape,
    private readonly dimensions: RankedDimension[],
  ) {
    const metricKeys = shape.metrics.map((m) => `,${JSON.stringify(m)}:`);
    const order = rowOrder(grouped.rows, dimensions);
    const { merge } = grouped;
    // Every column the writer reads is in the rows' order, read front to back, where looking each
    // row up in ~1 MB of columns missed the cache (docs/benchmarks.md, "The 31,000-row month: the
    // writer's columns read in order").
    let rows = order;
    if (merge === undefined) this.rowMetrics = grouped.metrics.map((column) => gather(new Float64Array(Math.min(order.length, shape.limit)), column, order));
    else {
      // Merged sums come in order, and so the metrics computed from them.
      const { firsts, merged } = mergeNeighbours(order, dimensions, grouped.metrics);
      rows = firsts;
      this.rowMetrics = metricColumnsFromSums(merge.formulas, merge.counters, merged, merge.zero);
    }
    this.groups = rows.length;
    this.shown = Math.min(this.groups, shape.limit);
    this.rowRanks = dimensions.map(({ ranks }) => gather(new Int32Array(this.shown), ranks, rows));
    const columns = grouped.metricColumns;
    this.kinds = Int32Array.from(columns, (c) => (c.kind === "scaled" ? KIND_SCALED : c.kind === "integer" ? KIND_INTEGER : KIND_DOUBLE));
    this.decimals = Int32Array.from(columns, (c) => (c.kind === "scaled" ? c.decimals : 0));
    const keys = metricKeys.map((key) => Buffer.from(key, "latin1"));
    this.keyStarts = new Int32Array(keys.length + 1);
    this.keyLengths = Int32Array.from(keys, (key) => key.length);
    for (let m = 0; m < keys.length; m++) this.keyStarts[m + 1] = this.keyStarts[m] + ((keys[m].length + 3) >> 2);
    this.keyWords = new Uint32Array(this.keyStarts[keys.length]);
    for (let m = 0; m < keys.length; m++) new Uint8Array(this.keyWords.buffer).set(keys[m], this.keyStarts[m] * 4);
    // A fragment's last word may write 3 bytes past its end.
    let rowBytes = 2;
    for (let m = 0; m < keys.length; m++) rowBytes += (m > 0 ? keys[m].length + 3 : 0) + MAX_NUMBER_BYTES;
    for (const d of dimensions) rowBytes += d.longest + 3;
    this.bytes = 2 + this.shown * rowBytes;
  }

  /**
   * Ranks the dimensions, then orders the rows; `between` runs after each dimension (the event
   * loop's writer awaits a turn there).
   */
  static async of(grouped: GroupedRows, shape: RowsShape, between?: () => Promise<void>): Promise<OrderedRows> {
    const dimensions: RankedDimension[] = [];
    for (let d = 0; d < shape.dimensions.length; d++) {
      // The first metric's key rides on the last dimension's value: one copy fewer per row.
      dimensions.push(rankDimension(grouped, shape, d, d === shape.dimensions.length - 1 ? `,${JSON.stringify(shape.metrics[0])}:` : ""));
      await between?.();
    }
    return new OrderedRows(grouped, shape, dimensions);
  }

  /** The same, without pauses (the writer's thread). */
  static ofNow(grouped: GroupedRows, shape: RowsShape): OrderedRows {
    const dimensions = shape.dimensions.map((_, d) => rankDimension(grouped, shape, d, d === shape.dimensions.length - 1 ? `,${JSON.stringify(shape.metrics[0])}:` : ""));
    return new OrderedRows(grouped, shape, dimensions);
  }

  /** Writes the shown rows `from` to `to` (in order) at `at` of `bytes` (`[` first and `]` last are the caller's); the offset after them. */
  write(bytes: Uint8Array, view: DataView, at: number, from: number, to: number): number {
    const { dimensions, rowRanks, rowMetrics, kinds, decimals, keyWords, keyStarts, keyLengths } = this;
    for (let r = from; r < to; r++) {
      if (r > 0) bytes[at++] = 0x2c;
      for (let d = 0; d < dimensions.length; d++) {
        const { words, starts, lengths } = dimensions[d];
        const rank = rowRanks[d][r];
        at = copyWords(view, at, words, starts[rank], starts[rank + 1], lengths[rank]);
      }
      for (let m = 0; m < rowMetrics.length; m++) {
        if (m > 0) at = copyWords(view, at, keyWords, keyStarts[m], keyStarts[m + 1], keyLengths[m]);
        const value = rowMetrics[m][r];
        const kind = kinds[m];
        if (kind === KIND_SCALED) at = writeScaled(bytes, at, value, decimals[m]);
        else if (kind === KIND_INTEGER) at = writeInteger(bytes, at, value);
        else at = writeAscii(bytes, at, duckdbJsonDouble(value));
      }
      bytes[at++] = 0x7d;
    }
    return at;
  }

  /** Writes the whole array into `bytes` (at least `this.bytes` long); its length. */
  writeAll(bytes: Uint8Array): number {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    bytes[0] = 0x5b;
    const at = this.write(bytes, view, 1, 0, this.shown);
    bytes[at] = 0x5d;
    return at + 1;
  }
}
