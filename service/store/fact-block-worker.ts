/**
 * The worker thread of a load (fact-block-thread.ts): reads its source (the seeded traffic, an
 * NDJSON file, or NDJSON chunks the loading thread passes on) and encodes its facts into blocks
 * (fact-blocks.ts), sent as they fill. An NDJSON line is checked as it is parsed; the worker
 * stops sending blocks at the first bad one (the source is read to its end, to report every bad
 * line).
 */
import { parentPort, workerData } from "node:worker_threads";
import { FactError } from "./errors.js";
import type { FactBlockWorkerData, FromWorker, ToWorker } from "./fact-block-thread.js";
import { FactBlockEncoder } from "./fact-blocks.js";
import { ndjsonFileFacts, NdjsonFactReader, PROGRESS_EVERY, type FactSourceHooks } from "./fact-source.js";
import { generateSeedBatches } from "./seed.js";
import type { Fact } from "./store.js";

const port = parentPort!;
const { source, capacity, blocks } = workerData as FactBlockWorkerData;
const send = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

/** Buffers handed back, and a waiter for the next one. */
const free: ArrayBuffer[] = [];
let freed: (() => void) | undefined;
/** NDJSON chunks passed on, and a waiter for the next one (null: the stream ended). */
const chunks: (ArrayBuffer | null)[] = [];
let chunked: (() => void) | undefined;

port.on("message", (message: ToWorker) => {
  if (message.type === "free") {
    free.push(message.buffer);
    freed?.();
  } else {
    chunks.push(message.type === "chunk" ? message.bytes : null);
    chunked?.();
  }
});

const encoder = new FactBlockEncoder(capacity);
let allocated = 0;
let stopped = false;
let position = 0;
const hooks: FactSourceHooks = {
  onBadLine: (error) => send({ type: "bad", line: error.line, reason: error.reason }),
  onProgress: (read) => send({ type: "progress", read }),
};

/** A buffer for the next block: a new one while fewer than `blocks` exist, else the next handed back. */
async function nextBuffer(): Promise<ArrayBuffer | undefined> {
  if (free.length === 0 && allocated < blocks) {
    allocated++;
    return undefined;
  }
  while (free.length === 0) await new Promise<void>((resolve) => (freed = resolve));
  freed = undefined;
  return free.shift();
}

async function sendBlock(): Promise<void> {
  const block = encoder.take();
  send({ type: "block", block }, [block.buffer]);
  encoder.start(await nextBuffer());
}

/**
 * Encodes an NDJSON source's facts, sending each block as it fills. The reader checked them
 * (`parseFactLine`), reports each bad line itself and yields no fact after the first.
 */
async function encodeChecked(facts: Iterable<Fact>): Promise<void> {
  for (const fact of facts) {
    encoder.addChecked(fact);
    if (encoder.full) await sendBlock();
  }
}

/**
 * Encodes the seed's facts, a batch at a time (generateSeedBatches: a plain loop over an array
 * costs a fraction of resuming a generator per fact), telling progress by facts. They are not
 * checked again: the seed makes only facts the checks pass (seed.test.ts checks every fact of its
 * pinned cases), and checking them was about a seventh of the worker's time (0.45 of 3 s per
 * 3.3 M facts, 2026-11-26).
 */
async function encodeSeed(batches: Iterable<Fact[]>): Promise<void> {
  for (const batch of batches) {
    for (let i = 0; i < batch.length; i++) {
      if (++position % PROGRESS_EVERY === 0) hooks.onProgress!(position);
      encoder.addChecked(batch[i]);
      if (encoder.full) await sendBlock();
    }
  }
}

async function nextChunk(): Promise<ArrayBuffer | null> {
  while (chunks.length === 0) await new Promise<void>((resolve) => (chunked = resolve));
  chunked = undefined;
  return chunks.shift()!;
}

async function run(): Promise<void> {
  encoder.start(await nextBuffer());
  if ("seed" in source) await encodeSeed(generateSeedBatches(source.seed));
  else {
    const reader = new NdjsonFactReader(hooks);
    try {
      if ("ndjsonFile" in source) await encodeChecked(ndjsonFileFacts(source.ndjsonFile, reader));
      else {
        for (let chunk = await nextChunk(); chunk !== null; chunk = await nextChunk()) {
          await encodeChecked(reader.facts(new Uint8Array(chunk)));
          send({ type: "chunk-read" });
        }
        await encodeChecked(reader.end());
      }
    } catch (error) {
      // The bad lines were reported one by one as they were found.
      if (!(error instanceof FactError)) throw error;
      stopped = true;
    }
  }
  if (!stopped && encoder.holdsFacts) {
    const block = encoder.take();
    send({ type: "block", block }, [block.buffer]);
  }
  send({ type: "end" });
}

run().catch((error: unknown) => send({ type: "failed", error }));
