/**
 * The notice thread's side (see notice-thread.ts): a NoticeSender with its own HttpClient,
 * fed by batches from the exchange's thread. Counters are written into the shared array the
 * exchange reads; log records are posted back, since the exchange's logger lives there.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { EventLogger } from "../events/facts.js";
import { HttpClient } from "./http-client.js";
import { COUNTER_SLOTS, type NoticeThreadMessage, type NoticeWorkerData } from "./notice-thread.js";
import { NoticeSender, type NoticeKind } from "./notices.js";

const data = workerData as NoticeWorkerData;
const port = parentPort!;
const counters = new BigInt64Array(data.counters);

const post = (level: "info" | "warn" | "error") => (obj: object, msg?: string) => port.postMessage({ type: "log", level, obj, msg });
const logger: EventLogger = { info: post("info"), warn: post("warn"), error: post("error") };

const http = new HttpClient({ maxBodyBytes: data.maxBodyBytes, noticeConnections: data.options.connections, noticePipelining: data.options.pipelining, privateHosts: data.privateHosts });
const sender = new NoticeSender(http, logger, data.options);

/** Copies the sender's counters into the shared array, once per turn of this thread that changed them. */
let publishing = false;
function publish(): void {
  if (publishing) return;
  publishing = true;
  setImmediate(store);
}
const COUNTER_NAMES = ["sent", "delivered", "retried", "failed", "dropped", "refused"] as const;
function store(): void {
  publishing = false;
  const stats = sender.stats();
  // Pending first and received last: a reader between the stores counts a notice twice, never zero times.
  Atomics.store(counters, COUNTER_SLOTS.pending, BigInt(stats.pending));
  for (const kind of ["win", "billing"] as const) {
    for (const name of COUNTER_NAMES) Atomics.store(counters, COUNTER_SLOTS[kind][name], BigInt(stats[kind][name]));
  }
  Atomics.store(counters, COUNTER_SLOTS.received, BigInt(received));
}
let received = 0;
sender.onChange = publish;

port.on("message", (message: NoticeThreadMessage) => {
  if (message.type === "send") {
    const items = message.items;
    // Flat: kind, url, auction, bidder, imp, kind, url, …; held for the batch window already, so sent at once.
    const notices: [NoticeKind, string, object][] = [];
    for (let i = 0; i < items.length; i += 5) notices.push([items[i] as NoticeKind, items[i + 1], { auction: items[i + 2], bidder: items[i + 3], imp: items[i + 4] }]);
    sender.sendNow(notices);
    received += items.length / 5;
    publish();
  } else if (message.type === "close") {
    void sender
      .close(message.graceMs)
      .then(() => http.close(0))
      .finally(() => {
        store();
        port.postMessage({ type: "closed" });
      });
  }
});
