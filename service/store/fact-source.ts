/**
 * Facts a load reads for itself, rather than being handed as objects: the seeded traffic, or an
 * NDJSON file or stream. Given one, the DuckDB store reads, checks and encodes the facts on a
 * worker thread (fact-block-thread.ts) while its own thread appends; `factsOf` reads them on the
 * calling thread (ClickHouse). NDJSON is read the same way on either: lines numbered from 1,
 * blank lines skipped, a byte order mark and a line's closing `\r` dropped, each bad line
 * reported with its number and reason, and then nothing loaded.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { FactError } from "./errors.js";
import { parseFactLine } from "./fact.js";
import { generateSeedFacts, type SeedOptions } from "./seed.js";
import type { Fact } from "./store.js";

/** What a load is told as it reads a source. */
export interface FactSourceHooks {
  /** Each bad NDJSON line, as it is found; the load reads on to find the others, then fails with the first, loading nothing. */
  onBadLine?(error: FactError): void;
  /** Every PROGRESS_EVERY items read: facts of the seed, lines of NDJSON. */
  onProgress?(read: number): void;
}

/** Where a load reads its facts: the seeded traffic, an NDJSON file, or an NDJSON stream (standard input). */
export type FactSource = ({ seed: SeedOptions } | { ndjsonFile: string } | { ndjsonStream: AsyncIterable<Uint8Array | string> }) & FactSourceHooks;

/** What `ReportStore.ingest` loads: facts as objects, or a source it reads. */
export type FactInput = Iterable<Fact> | AsyncIterable<Fact> | FactSource;

/** How often `onProgress` is called, in items read. */
export const PROGRESS_EVERY = 1_000_000;

/** Whether a load's input is a source to read rather than facts. */
export function isFactSource(input: FactInput): input is FactSource {
  return typeof input === "object" && input !== null && !(Symbol.iterator in input) && !(Symbol.asyncIterator in input);
}

/**
 * NDJSON in chunks of bytes, complete lines to facts. Chunks are cut at their last newline, so
 * a character of several bytes is never decoded in two halves.
 */
export class NdjsonFactReader {
  /** The number of the last line read. */
  line = 0;
  private carry: Uint8Array | undefined;
  private firstBad: FactError | undefined;

  constructor(private readonly hooks: FactSourceHooks = {}) {}

  /** The facts of the lines this chunk completes (the reader keeps what follows its last newline). */
  *facts(chunk: Uint8Array): Generator<Fact> {
    const end = chunk.lastIndexOf(10);
    if (end === -1) {
      this.carry = this.carry ? Buffer.concat([this.carry, chunk]) : Uint8Array.from(chunk);
      return;
    }
    let from = 0;
    if (this.carry) {
      // The carried bytes begin the line the chunk's first newline ends: only that line is joined
      // to them (joining the whole chunk copied 4 MiB a chunk, a tenth of a load's worker time).
      const first = chunk.indexOf(10);
      const fact = this.take(Buffer.concat([this.carry, chunk.subarray(0, first)]).toString("utf8"));
      this.carry = undefined;
      if (fact) yield fact;
      from = first + 1;
    }
    // A copy: the caller may reuse the chunk's memory.
    this.carry = end + 1 < chunk.length ? Uint8Array.from(chunk.subarray(end + 1)) : undefined;
    if (from > end) return;
    const text = Buffer.from(chunk.buffer, chunk.byteOffset + from, end - from).toString("utf8");
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      const fact = this.take(text.slice(start, newline));
      if (fact) yield fact;
      start = newline + 1;
    }
    const fact = this.take(text.slice(start));
    if (fact) yield fact;
  }

  /** The fact of the last line, if it had no newline; then throws the first bad line's FactError, if any. */
  *end(): Generator<Fact> {
    if (this.carry) {
      const fact = this.take(Buffer.from(this.carry).toString("utf8"));
      this.carry = undefined;
      if (fact) yield fact;
    }
    if (this.firstBad) throw this.firstBad;
  }

  private take(text: string): Fact | undefined {
    const lineNo = ++this.line;
    if (lineNo % PROGRESS_EVERY === 0) this.hooks.onProgress?.(lineNo);
    // A byte order mark is not part of the first fact.
    let line = lineNo === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() === "") return undefined;
    try {
      const fact = parseFactLine(line, lineNo);
      return this.firstBad ? undefined : fact;
    } catch (error) {
      if (!(error instanceof FactError)) throw error;
      this.firstBad ??= error;
      this.hooks.onBadLine?.(error);
      return undefined;
    }
  }
}

/** An NDJSON file's facts, read synchronously in large chunks (a sync generator costs a fraction of an async one per fact). */
export function* ndjsonFileFacts(path: string, reader: NdjsonFactReader): Generator<Fact> {
  const fd = openSync(path, "r");
  const buffer = Buffer.allocUnsafe(4 << 20);
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) yield* reader.facts(buffer.subarray(0, read));
  } finally {
    closeSync(fd);
  }
  yield* reader.end();
}

/** An NDJSON stream's facts. */
export async function* ndjsonStreamFacts(stream: AsyncIterable<Uint8Array | string>, reader: NdjsonFactReader): AsyncGenerator<Fact> {
  for await (const chunk of stream) yield* reader.facts(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  yield* reader.end();
}

/** The seeded facts, telling progress. */
export function* seedFacts(options: SeedOptions, hooks: FactSourceHooks = {}): Generator<Fact> {
  let read = 0;
  for (const fact of generateSeedFacts(options)) {
    yield fact;
    if (++read % PROGRESS_EVERY === 0) hooks.onProgress?.(read);
  }
}

/** A source's facts, read on this thread. */
export function factsOf(source: FactSource): Iterable<Fact> | AsyncIterable<Fact> {
  if ("seed" in source) return seedFacts(source.seed, source);
  if ("ndjsonFile" in source) return ndjsonFileFacts(source.ndjsonFile, new NdjsonFactReader(source));
  return ndjsonStreamFacts(source.ndjsonStream, new NdjsonFactReader(source));
}
