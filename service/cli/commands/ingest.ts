/** `adxkit ingest [FILE|-]`: load NDJSON facts into the report store, all-or-nothing per file. */
import { closeSync, openSync, readSync } from "node:fs";
import { access } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Command } from "commander";
import { DEFAULT_DB_PATH, FactError, parseFactLine, type Fact } from "../../store/index.js";
import { UsageError } from "../errors.js";
import { addStoreOptions, openStoreFrom } from "../store-options.js";

/** Bad lines printed one by one; past this only the count grows. */
const MAX_SHOWN = 100;
const PROGRESS_EVERY = 1_000_000;

/** The input had bad lines; they were printed as they were found. */
class BadInput extends Error {
  constructor(readonly count: number) {
    super(`${count} bad line${count === 1 ? "" : "s"}`);
  }
}

/**
 * The facts of an NDJSON stream, one per non-blank line. A bad line is printed to stderr with
 * its number and reason; reading goes on to report the others, yielding nothing more, and the
 * stream ends in `BadInput`, so the load rolls back.
 */
async function* readFacts(input: Readable, name: string): AsyncGenerator<Fact> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  let bad = 0;
  for await (const text of lines) {
    lineNo++;
    if (lineNo % PROGRESS_EVERY === 0) process.stderr.write(`ingest: ${lineNo.toLocaleString("en-US")} lines read\n`);
    // A byte order mark is not part of the first fact.
    const line = lineNo === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    if (line.trim() === "") continue;
    try {
      const fact = parseFactLine(line, lineNo);
      if (bad === 0) yield fact;
    } catch (error) {
      if (!(error instanceof FactError)) throw error;
      bad++;
      if (bad <= MAX_SHOWN) process.stderr.write(`${name}:${error.line}: ${error.reason}\n`);
    }
  }
  if (bad > 0) throw new BadInput(bad);
}

/**
 * The same, read synchronously from a file in large chunks: a sync generator costs a fraction of
 * an async one per fact, and a command-line load has no event loop to keep free.
 */
function* readFactsFromFile(path: string, name: string): Generator<Fact> {
  const fd = openSync(path, "r");
  const buffer = Buffer.allocUnsafe(4 << 20);
  let carry = "";
  let lineNo = 0;
  let bad = 0;
  const take = function* (line: string): Generator<Fact> {
    lineNo++;
    if (lineNo % PROGRESS_EVERY === 0) process.stderr.write(`ingest: ${lineNo.toLocaleString("en-US")} lines read\n`);
    const text = lineNo === 1 && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
    if (text.trim() === "") return;
    try {
      const fact = parseFactLine(text.endsWith("\r") ? text.slice(0, -1) : text, lineNo);
      if (bad === 0) yield fact;
    } catch (error) {
      if (!(error instanceof FactError)) throw error;
      bad++;
      if (bad <= MAX_SHOWN) process.stderr.write(`${name}:${error.line}: ${error.reason}\n`);
    }
  };
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      // Cut at the last newline so a multi-byte character is never split across chunks.
      const end = buffer.lastIndexOf(10, read - 1);
      if (end === -1) {
        carry += buffer.toString("utf8", 0, read);
        continue;
      }
      const text = carry + buffer.toString("utf8", 0, end);
      carry = buffer.toString("utf8", end + 1, read);
      let start = 0;
      for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
        yield* take(text.slice(start, newline));
        start = newline + 1;
      }
      yield* take(text.slice(start));
    }
    if (carry !== "") yield* take(carry);
  } finally {
    closeSync(fd);
  }
  if (bad > 0) throw new BadInput(bad);
}

export function configure(command: Command): void {
  addStoreOptions(command)
    .argument("[file]", "NDJSON file; - or nothing reads standard input")
    .option("--db <path>", "database file (its folder is created) or :memory:", DEFAULT_DB_PATH)
    .addHelpText(
      "after",
      `
Each line is one hourly fact; facts with the same key add up:
  {"side":"supply","date_hour":"2026-10-01T05:00:00","publisher_id":"pub-1","app_bundle_id":"com.example.app","placement_id":"pl-1","ad_format":1,"platform":2,"country":"USA","request":100,"response":80,"impression":60,"revenue":1.23}
  {"side":"demand","date_hour":"2026-10-01T05:00:00","bidder_id":"dsp-1","ad_format":3,"platform":1,"request":100,"response":50,"impression":20,"revenue":0.9}
Blank lines are skipped. A bad line is reported as FILE:LINE: reason on stderr, and then
nothing of the file is loaded (exit 1). On success one JSON line: {"ingested":N,"seconds":S}.

Examples:
  $ adxkit ingest --db ./data/adxkit.duckdb facts.ndjson
  $ zcat facts.ndjson.gz | adxkit ingest --db ./data/adxkit.duckdb -`,
    )
    .action(async (file: string | undefined, options: { db: string }) => {
      const fromStdin = file === undefined || file === "-";
      if (!fromStdin) {
        await access(file).catch((error: NodeJS.ErrnoException) => {
          throw new UsageError(`cannot read ${file}: ${error.code ?? error.message}`);
        });
      }
      const name = fromStdin ? "<stdin>" : file;
      const store = await openStoreFrom(options, { create: true });
      const started = performance.now();
      try {
        const ingested = await store.ingest(fromStdin ? readFacts(process.stdin, name) : readFactsFromFile(file, name));
        const seconds = Math.round(performance.now() - started) / 1000;
        process.stdout.write(`${JSON.stringify({ ingested, seconds })}\n`);
      } catch (error) {
        if (!(error instanceof BadInput)) throw error;
        process.stderr.write(`ingest: ${error.message} in ${name}; nothing was loaded\n`);
        process.exitCode = 1;
      } finally {
        await store.close();
      }
    });
}
