/**
 * A load's facts read, checked and encoded on a worker thread (fact-block-worker.ts), arriving
 * here as blocks (fact-blocks.ts) whose buffers are transferred, not copied. The worker fills
 * the next block while this thread appends the last: a few buffers go round, each handed back
 * (`release`) once appended, so a worker faster than the store waits instead of filling memory.
 * An NDJSON stream is read here and its chunks passed on, a few at a time.
 */
import type { Worker } from "node:worker_threads";
import { startWorker } from "../worker-thread.js";
import { FactError } from "./errors.js";
import type { FactBlock } from "./fact-blocks.js";
import type { FactSource } from "./fact-source.js";
import type { SeedOptions } from "./seed.js";

/** Facts per block: 16 data chunks of DuckDB's (about 3.8 MB a block). */
export const BLOCK_FACTS = 32_768;
/** Blocks going round: one being filled, one being appended, one waiting between them. */
const BLOCKS = 3;
/** Chunks of an NDJSON stream sent ahead of the worker's reading. */
const CHUNKS_AHEAD = 4;

/** What the worker is given: the source without its hooks (functions stay on this thread). */
export interface FactBlockWorkerData {
  source: { seed: SeedOptions } | { ndjsonFile: string } | { ndjsonStream: true };
  capacity: number;
  blocks: number;
}

/** Messages from the worker. */
export type FromWorker =
  | { type: "block"; block: FactBlock }
  | { type: "bad"; line: number; reason: string }
  | { type: "progress"; read: number }
  | { type: "chunk-read" }
  | { type: "end" }
  | { type: "failed"; error: unknown };

/** Messages to the worker. */
export type ToWorker = { type: "free"; buffer: ArrayBuffer } | { type: "chunk"; bytes: ArrayBuffer } | { type: "chunks-end" };

type Received = Exclude<FromWorker, { type: "chunk-read" }>;

/** One load's worker thread and the blocks it sends. */
export class FactBlockThread {
  private readonly worker: Worker;
  private readonly received: Received[] = [];
  private wake: (() => void) | undefined;
  private chunksAhead = 0;
  private chunkRead: (() => void) | undefined;
  private done = false;

  constructor(
    private readonly source: FactSource,
    capacity = BLOCK_FACTS,
  ) {
    const data: FactBlockWorkerData = {
      source: "seed" in source ? { seed: source.seed } : "ndjsonFile" in source ? { ndjsonFile: source.ndjsonFile } : { ndjsonStream: true },
      capacity,
      blocks: BLOCKS,
    };
    this.worker = startWorker(import.meta.url, "fact-block-worker", { workerData: data });
    this.worker.on("message", (message: FromWorker) => {
      if (message.type === "chunk-read") {
        this.chunksAhead--;
        this.chunkRead?.();
      } else this.receive(message);
    });
    this.worker.on("error", (error) => this.receive({ type: "failed", error }));
    this.worker.on("exit", (code) => this.receive({ type: "failed", error: new Error(`the load's worker thread exited (code ${code}) before its end`) }));
    if ("ndjsonStream" in source) this.pump(source.ndjsonStream).catch((error: unknown) => this.receive({ type: "failed", error }));
  }

  /**
   * The blocks, in order. Bad lines go to the source's `onBadLine` as they come; after the last
   * block, the first of them is thrown (the worker stops sending blocks at the first).
   */
  async *blocks(): AsyncGenerator<FactBlock> {
    let firstBad: FactError | undefined;
    for (;;) {
      const message = this.received.shift() ?? (await this.next());
      if (message.type === "block") yield message.block;
      else if (message.type === "bad") {
        const error = new FactError(message.line, message.reason);
        firstBad ??= error;
        this.source.onBadLine?.(error);
      } else if (message.type === "progress") this.source.onProgress?.(message.read);
      else if (message.type === "end") {
        this.done = true;
        if (firstBad) throw firstBad;
        return;
      } else {
        this.done = true;
        throw message.error;
      }
    }
  }

  /** Hands a block's buffer back to the worker, to fill again. */
  release(block: FactBlock): void {
    if (!this.done) this.post({ type: "free", buffer: block.buffer }, [block.buffer]);
  }

  /** Stops the worker (at once, if the load ended early). */
  async close(): Promise<void> {
    this.done = true;
    this.chunkRead?.();
    await this.worker.terminate();
  }

  private post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  private receive(message: Received): void {
    // After the end, the worker's exit (or a failure of its termination) is no news.
    if (this.done && message.type === "failed") return;
    this.received.push(message);
    this.wake?.();
  }

  private next(): Promise<Received> {
    return new Promise<void>((resolve) => (this.wake = resolve)).then(() => {
      this.wake = undefined;
      return this.received.shift() ?? this.next();
    });
  }

  /** Passes an NDJSON stream's chunks to the worker (copied into buffers of their own, which move), a few ahead of its reading. */
  private async pump(stream: AsyncIterable<Uint8Array | string>): Promise<void> {
    for await (const chunk of stream) {
      if (this.done) return;
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : new Uint8Array(chunk);
      // A short string's Buffer is a view of Node's shared pool, and Buffer's own slice() is a view
      // too: the bytes are copied (Uint8Array's slice) so that only they move, never the pool.
      const buffer = bytes.buffer.byteLength === bytes.byteLength ? (bytes.buffer as ArrayBuffer) : (Uint8Array.prototype.slice.call(bytes).buffer as ArrayBuffer);
      this.post({ type: "chunk", bytes: buffer }, [buffer]);
      if (++this.chunksAhead >= CHUNKS_AHEAD) {
        await new Promise<void>((resolve) => (this.chunkRead = resolve));
        this.chunkRead = undefined;
      }
    }
    if (!this.done) this.post({ type: "chunks-end" });
  }
}
