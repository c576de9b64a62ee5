/**
 * Large reports' rows written on a thread of their own (report-writer-worker.ts), so that the
 * event loop only reads DuckDB's columns and sends the finished bytes: ranking, ordering and
 * writing 31,000 rows is ~20–30 ms of CPU, which on the event loop delayed every request waiting
 * behind it (docs/benchmarks.md, "The read side, part nine"). The columns' memory moves to the
 * thread and the answer's memory back (transferred, never copied or cloned); the dictionary
 * names the rows need are sent once each and kept there, so a report sends only names it is the
 * first to use.
 *
 * The thread starts at the first large report and ends with the store. When it fails or exits,
 * the reports it was writing fail with an error saying so (the routes answer -1) and the next
 * large report starts a new one.
 */
import type { Worker } from "node:worker_threads";
import type { BackgroundPriority } from "../../thread-priority.js";
import { startWorker } from "../../worker-thread.js";
import { StoreError } from "../errors.js";
import type { AnswerBuffer, AnswerBuffers } from "./answer-buffers.js";
import type { DictionaryName } from "./dictionary-names.js";
import type { MetricColumn } from "./report-sql.js";
import type { GroupedRows, MergedSums, RowsShape } from "./report-writer.js";

/** Dictionary names new to the thread, packed: entry i's JSON text and UTF-8 bytes end at `ends[2i]` and `ends[2i + 1]` of `text`. */
export interface PackedNames {
  codes: Int32Array;
  ends: Int32Array;
  text: Uint8Array;
}

/** Messages to the thread. */
export type ToWriter =
  | { type: "names"; table: number; names: PackedNames }
  | { type: "forget"; table: number }
  | {
      type: "write";
      id: number;
      shape: RowsShape;
      rows: number;
      keys: (Int32Array | Float64Array)[];
      metrics: Float64Array[];
      metricColumns: MetricColumn[];
      /** Rows to merge once ordered (report-writer.ts), `metrics` holding their sums. */
      merge: MergedSums | null;
      /** Per dimension: the names table (sent before) of a string dimension, else null. */
      tables: (number | null)[];
      /** Memory to write the answer into, when large enough. */
      spare: ArrayBuffer | null;
    };

/** Messages from the thread: the answer's memory and length (and the spare, unused), or why it failed. */
export type FromWriter = { type: "written"; id: number; memory: ArrayBuffer; length: number; groups: number; spare: ArrayBuffer | null } | { type: "failed"; id: number; message: string };

/** Starts the thread; a test may give one of its own. */
export type StartWriter = () => Worker;

/** What the thread is started with. */
export interface WriterData {
  /** Where the thread puts itself at start (Linux); undefined: unchanged. */
  background?: BackgroundPriority;
}

/** Starts the report writer's thread, behind the event loop as `background` says (service/thread-priority.ts). */
export const reportWriterStarter =
  (background?: BackgroundPriority): StartWriter =>
  () =>
    startWorker(import.meta.url, "report-writer-worker", { workerData: { background } satisfies WriterData });

/** A written answer and how many groups it has before the limit's cut. */
export type WrittenRows = AnswerBuffer & { groups: number };

interface Pending {
  resolve: (answer: WrittenRows) => void;
  reject: (error: Error) => void;
  buffers: AnswerBuffers;
}

/** The report writer's thread of one store. */
export class ReportWriterThread {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending>();
  /** The answers being written, settled or not (`close` waits for them). */
  private readonly writing = new Set<Promise<unknown>>();
  private lastId = 0;
  /** Names tables the thread holds: which table each is there and how many of its entries it has. */
  private sent = new WeakMap<Map<number, DictionaryName>, { table: number; entries: number }>();
  /** Per dimension, the table sent last: the one before is forgotten when a newer replaces it (the names' cache starts over). */
  private newest = new Map<string, Map<number, DictionaryName>>();
  private lastTable = 0;
  private closed = false;

  constructor(private readonly start: StartWriter = reportWriterStarter()) {}

  /** Writes grouped rows as the report's JSON array on the thread; the columns' memory moves there. */
  write(grouped: GroupedRows, shape: RowsShape, buffers: AnswerBuffers): Promise<WrittenRows> {
    if (this.closed) return Promise.reject(new StoreError("ADX_ERR_STORE_CLOSED", "the report store is closed"));
    const worker = this.running();
    const tables = shape.dimensions.map((d, i) => (d.type === "string" ? this.sendNames(worker, d.name, grouped.names[i]!) : null));
    const id = ++this.lastId;
    const spare = buffers.takeSpare() ?? null;
    const columns = [...grouped.keys, ...grouped.metrics];
    const message: ToWriter = { type: "write", id, shape, rows: grouped.rows, keys: grouped.keys, metrics: grouped.metrics, metricColumns: grouped.metricColumns, merge: grouped.merge ?? null, tables, spare };
    // A plain count's column is its sum's own array (metric-columns.ts): each buffer moves once.
    const moved = [...new Set(columns.map((c) => c.buffer as ArrayBuffer))];
    if (spare !== null) moved.push(spare);
    const answer = new Promise<WrittenRows>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, buffers });
      if (this.pending.size === 1) worker.ref();
      try {
        worker.postMessage(message, moved);
      } catch (error) {
        // Not sent (a buffer that cannot move): nothing will answer it.
        this.settle({ type: "failed", id, message: (error as Error).message });
      }
    });
    const done: Promise<unknown> = answer.then(
      () => this.writing.delete(done),
      () => this.writing.delete(done),
    );
    this.writing.add(done);
    return answer;
  }

  /** Waits for the reports being written, then ends the thread. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.writing);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** The thread, started if none runs. */
  private running(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = this.start();
    this.worker = worker;
    // What the new thread holds: nothing yet.
    this.sent = new WeakMap();
    this.newest.clear();
    worker.unref();
    worker.on("message", (message: FromWriter) => this.settle(message));
    worker.on("error", (error) => this.fail(worker, `failed: ${error.message}`));
    worker.on("exit", (code) => this.fail(worker, `exited (code ${code})`));
    return worker;
  }

  private settle(message: FromWriter): void {
    const job = this.pending.get(message.id);
    if (job === undefined) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (message.type === "failed") return job.reject(new Error(`the report writer thread failed: ${message.message}`));
    if (message.spare !== null) job.buffers.give(message.spare);
    job.resolve({ ...job.buffers.adopt(message.memory, message.length), groups: message.groups });
  }

  /** The thread is gone: its reports fail, and the next report starts another. */
  private fail(worker: Worker, what: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const jobs = [...this.pending.values()];
    this.pending.clear();
    for (const job of jobs) job.reject(new Error(`the report writer thread ${what} while writing a report`));
  }

  /** Sends the thread the names of `names` it does not hold yet; the table's number there. */
  private sendNames(worker: Worker, dimension: string, names: Map<number, DictionaryName>): number {
    let held = this.sent.get(names);
    if (held === undefined) {
      held = { table: ++this.lastTable, entries: 0 };
      this.sent.set(names, held);
      const before = this.newest.get(dimension);
      if (before !== undefined && before !== names) {
        const forgotten = this.sent.get(before);
        this.sent.delete(before);
        if (forgotten !== undefined) worker.postMessage({ type: "forget", table: forgotten.table } satisfies ToWriter);
      }
      this.newest.set(dimension, names);
    }
    if (held.entries < names.size) {
      const packed = packNames(names, held.entries);
      held.entries = names.size;
      worker.postMessage({ type: "names", table: held.table, names: packed } satisfies ToWriter, [packed.codes.buffer, packed.ends.buffer, packed.text.buffer] as ArrayBuffer[]);
    }
    return held.table;
  }
}

/** The entries of `names` from the `from`-th on (a Map keeps insertion order, and the names' cache only adds), packed. */
export function packNames(names: Map<number, DictionaryName>, from: number): PackedNames {
  const count = names.size - from;
  const codes = new Int32Array(count);
  const ends = new Int32Array(2 * count);
  const entries: DictionaryName[] = [];
  let i = 0;
  let bytes = 0;
  for (const [code, name] of names) {
    if (i++ < from) continue;
    codes[entries.length] = code;
    bytes += name.json.length + name.bytes.length;
    entries.push(name);
  }
  const text = new Uint8Array(bytes);
  let at = 0;
  entries.forEach((name, k) => {
    text.set(name.json, at);
    ends[2 * k] = at += name.json.length;
    text.set(name.bytes, at);
    ends[2 * k + 1] = at += name.bytes.length;
  });
  return { codes, ends, text };
}

/** Packed names back as a table (views of the packed text). */
export function unpackNames(packed: PackedNames, into: Map<number, DictionaryName>): void {
  let at = 0;
  for (let k = 0; k < packed.codes.length; k++) {
    const json = packed.text.subarray(at, packed.ends[2 * k]);
    const bytes = packed.text.subarray(packed.ends[2 * k], packed.ends[2 * k + 1]);
    at = packed.ends[2 * k + 1];
    into.set(packed.codes[k], { json, bytes });
  }
}
