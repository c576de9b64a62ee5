/**
 * Win and billing notices sent from a worker thread (notice-worker.ts), so that their HTTP
 * calls — one GET per auction won, 20–30 µs of CPU each even pipelined (bench/notices.ts) — do
 * not run on the event loop that answers auctions. The notices of a batch window (notices.ts
 * `batchMs`) go over in one message and leave the worker together; the worker's counters live
 * in a shared array, read here without a message; its log records come back as messages.
 * Semantics are NoticeSender's: retries with backoff, a bound on pending notices, close waits
 * for notices in flight.
 * If the worker dies, the notices not yet handed over and all later ones go through a
 * NoticeSender on this thread; those left in the dead worker are counted as `lost`.
 */
import type { Worker } from "node:worker_threads";
import { startWorker } from "../worker-thread.js";
import type { EventLogger } from "../events/facts.js";
import type { KindCounters, NoticeKind, NoticeOptions } from "./notices.js";
import type { NoticeSender } from "./notices.js";
import { auctionRules } from "@adxkit/bindings";

/** Slots of the shared counter array. */
export const COUNTER_SLOTS = {
  win: { sent: 0, delivered: 1, retried: 2, failed: 3, dropped: 4, refused: 5 },
  billing: { sent: 6, delivered: 7, retried: 8, failed: 9, dropped: 10, refused: 11 },
  pending: 12,
  /** Notices the worker has taken from its messages. */
  received: 13,
} as const;
const SLOTS = 14;

export interface NoticeWorkerData {
  counters: SharedArrayBuffer;
  options: NoticeOptions;
  maxBodyBytes?: number;
  /** HttpClientOptions.privateHosts: the worker's connections are checked like the exchange's. */
  privateHosts?: readonly string[];
}

export type NoticeThreadMessage =
  | { type: "send"; items: string[] }
  | { type: "close"; graceMs: number };

type WorkerMessage = { type: "log"; level: "info" | "warn" | "error"; obj: object; msg?: string } | { type: "closed" };

const KINDS: readonly NoticeKind[] = ["win", "billing"];

export class NoticeThread {
  private readonly counters = new BigInt64Array(new SharedArrayBuffer(SLOTS * 8));
  private worker: Worker | undefined;
  /** Notices of this batch window not yet handed over (flat: kind, url, auction, bidder, imp). */
  private queue: string[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly batchMs: number;
  private posted = 0;
  /** Notices queued for the worker, by kind (the fallback counts its own). */
  private readonly sent: Record<NoticeKind, number> = { win: 0, billing: 0 };
  /** Notices lost with a dead worker. */
  private lost = 0;
  private closing: Promise<void> | undefined;
  private onClosed: (() => void) | undefined;

  constructor(
    /** This thread's sender: the fallback when the worker is gone. */
    private readonly fallback: NoticeSender,
    private readonly logger: EventLogger,
    options: NoticeOptions,
    maxBodyBytes?: number,
    privateHosts?: readonly string[],
  ) {
    this.batchMs = options.batchMs ?? auctionRules.noticeBatchMs;
    const worker = startWorker(import.meta.url, "notice-worker", { workerData: { counters: this.counters.buffer as SharedArrayBuffer, options, maxBodyBytes, privateHosts } satisfies NoticeWorkerData });
    // A forgotten exchange must not keep its process alive; close() waits for the worker itself.
    worker.unref();
    worker.on("message", (message: WorkerMessage) => {
      if (message.type === "log") this.logger[message.level](message.obj, message.msg);
      else this.onClosed?.();
    });
    worker.on("error", (error) => this.logger.error({ err: error }, "the notice thread failed; notices go through the exchange's thread"));
    worker.on("exit", (code) => {
      if (this.worker === undefined) return;
      this.worker = undefined;
      this.lost = this.inWorker();
      if (this.closing === undefined) this.logger.error({ code, lost: this.lost }, "the notice thread exited; notices go through the exchange's thread");
      this.onClosed?.();
    });
    this.worker = worker;
  }

  /** Calls a notice URL in the background (in the worker), with retries. */
  send(kind: NoticeKind, url: string, context: { auction: string; bidder: string; imp: string }): void {
    if (this.worker === undefined || this.closing !== undefined) return this.fallback.send(kind, url, context);
    this.sent[kind]++;
    this.queue.push(kind, url, context.auction, context.bidder, context.imp);
    this.flushTimer ??= setTimeout(this.flush, Math.max(0, this.batchMs));
  }

  private readonly flush = (): void => {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.queue.length === 0) return;
    const items = this.queue;
    this.queue = [];
    if (this.worker === undefined) {
      for (let i = 0; i < items.length; i += 5) {
        const kind = items[i] as NoticeKind;
        this.sent[kind]--; // counted again by the fallback
        this.fallback.send(kind, items[i + 1], { auction: items[i + 2], bidder: items[i + 3], imp: items[i + 4] });
      }
      return;
    }
    this.posted += items.length / 5;
    this.worker.postMessage({ type: "send", items } satisfies NoticeThreadMessage);
  };

  private slot(index: number): number {
    return Number(Atomics.load(this.counters, index));
  }

  /** Notices handed to the worker and not done: in its sender, or in a message it has not read yet. */
  private inWorker(): number {
    return this.slot(COUNTER_SLOTS.pending) + this.posted - this.slot(COUNTER_SLOTS.received);
  }

  /** Counters of both threads: `sent` as notices are handed over, the others as the worker reports them. */
  stats(): Record<NoticeKind, KindCounters> & { pending: number; lost: number } {
    const local = this.fallback.stats();
    const pending = local.pending + this.queue.length / 5 + (this.worker ? this.inWorker() : 0);
    const result = { pending, lost: this.lost } as Record<NoticeKind, KindCounters> & { pending: number; lost: number };
    for (const kind of KINDS) {
      const slots = COUNTER_SLOTS[kind];
      result[kind] = {
        sent: this.sent[kind] + local[kind].sent,
        delivered: this.slot(slots.delivered) + local[kind].delivered,
        retried: this.slot(slots.retried) + local[kind].retried,
        failed: this.slot(slots.failed) + local[kind].failed,
        dropped: this.slot(slots.dropped) + local[kind].dropped,
        refused: this.slot(slots.refused) + local[kind].refused,
      };
    }
    return result;
  }

  /** Hands over what is queued, lets the worker finish its notices within `graceMs`, then stops it. */
  close(graceMs = 1000): Promise<void> {
    this.closing ??= (async () => {
      this.flush();
      const worker = this.worker;
      if (worker !== undefined) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          this.onClosed = resolve;
          // The worker's own close is bounded by graceMs; this bounds a worker that does not answer.
          timer = setTimeout(resolve, graceMs + 2000);
          worker.postMessage({ type: "close", graceMs } satisfies NoticeThreadMessage);
        });
        clearTimeout(timer);
        this.worker = undefined;
        await worker.terminate();
      }
      await this.fallback.close(graceMs);
    })();
    return this.closing;
  }
}
