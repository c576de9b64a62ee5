/** `adxkit ingest [FILE|-]`: load NDJSON facts into the report store, all-or-nothing per file. */
import { access } from "node:fs/promises";
import type { Command } from "commander";
import { DEFAULT_DB_PATH, FactError, type FactSourceHooks } from "../../store/index.js";
import { UsageError } from "../errors.js";
import { addStoreOptions, openStoreFrom } from "../store-options.js";

/** Bad lines printed one by one; past this only the count grows. */
const MAX_SHOWN = 100;

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
      // Read, checked and encoded on the store's worker thread; each bad line comes back here as found.
      let bad = 0;
      const hooks: FactSourceHooks = {
        onBadLine: (error) => {
          if (++bad <= MAX_SHOWN) process.stderr.write(`${name}:${error.line}: ${error.reason}\n`);
        },
        onProgress: (lines) => process.stderr.write(`ingest: ${lines.toLocaleString("en-US")} lines read\n`),
      };
      try {
        const ingested = await store.ingest(fromStdin ? { ndjsonStream: process.stdin, ...hooks } : { ndjsonFile: file, ...hooks });
        const seconds = Math.round(performance.now() - started) / 1000;
        process.stdout.write(`${JSON.stringify({ ingested, seconds })}\n`);
      } catch (error) {
        if (!(error instanceof FactError) || bad === 0) throw error;
        process.stderr.write(`ingest: ${bad} bad line${bad === 1 ? "" : "s"} in ${name}; nothing was loaded\n`);
        process.exitCode = 1;
      } finally {
        await store.close();
      }
    });
}
