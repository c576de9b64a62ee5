/**
 * The report writer's thread (report-writer-thread.ts): ranks, orders and writes a large report's
 * grouped rows (report-writer.ts) into memory that moves back to the event loop. It keeps the
 * dictionary names it is sent, by table, until told to forget a table.
 */
import { parentPort, workerData } from "node:worker_threads";
import { lowersThreads, ownThreadId, putBehind } from "../../thread-priority.js";
import { roomFor } from "./answer-buffers.js";
import type { DictionaryName } from "./dictionary-names.js";
import { unpackNames, type FromWriter, type ToWriter, type WriterData } from "./report-writer-thread.js";
import { OrderedRows, type GroupedRows } from "./report-writer.js";

const port = parentPort!;
const { background } = (workerData ?? {}) as WriterData;
if (lowersThreads(background)) {
  const tid = ownThreadId();
  if (tid !== undefined) putBehind([tid], background);
}
const tables = new Map<number, Map<number, DictionaryName>>();

port.on("message", (message: ToWriter) => {
  if (message.type === "names") {
    let table = tables.get(message.table);
    if (table === undefined) tables.set(message.table, (table = new Map()));
    unpackNames(message.names, table);
  } else if (message.type === "forget") tables.delete(message.table);
  else write(message);
});

function write(job: Extract<ToWriter, { type: "write" }>): void {
  let spare = job.spare;
  try {
    const names = job.tables.map((table) => {
      if (table === null) return undefined;
      const found = tables.get(table);
      if (found === undefined) throw new Error(`names table ${table} was never sent`);
      return found;
    });
    const grouped: GroupedRows = { kind: "grouped", rows: job.rows, keys: job.keys, names, metrics: job.metrics, metricColumns: job.metricColumns, merge: job.merge ?? undefined };
    const ordered = OrderedRows.ofNow(grouped, job.shape);
    let memory: ArrayBuffer;
    if (spare !== null && spare.byteLength >= ordered.bytes) {
      memory = spare;
      spare = null;
    } else memory = new ArrayBuffer(roomFor(ordered.bytes));
    const length = ordered.writeAll(new Uint8Array(memory, 0, ordered.bytes));
    send({ type: "written", id: job.id, memory, length, groups: ordered.groups, spare }, spare === null ? [memory] : [memory, spare]);
  } catch (error) {
    send({ type: "failed", id: job.id, message: (error as Error)?.message ?? String(error) });
  }
}

function send(message: FromWriter, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}
