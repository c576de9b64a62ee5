// A load from a source appends with DuckDB on one thread (duckdb/ingest.ts, appendOnOneThread:
// DuckDB 1.5's Appender otherwise polls for its flush's tasks in a loop) and gives the instance
// its threads back afterwards, whether the load commits or fails; facts given as objects (a
// server's flushes) never change the setting.
import { describe, expect, it } from "vitest";
import type { DuckDBConnection } from "@duckdb/node-api";
import { openDatabase, type ConnectionPool } from "../../service/store/duckdb/connection.js";
import { createDictionaries } from "../../service/store/duckdb/dictionary.js";
import { ingestFacts } from "../../service/store/duckdb/ingest.js";
import { generateSeedFacts } from "../../service/store/index.js";
import { supply } from "./helpers.js";

const threadsOf = async (connection: DuckDBConnection) => Number((await connection.runAndReadAll("SELECT current_setting('threads')")).getRowsJS()[0][0]);

async function withPool<T>(run: (pool: ConnectionPool) => Promise<T>): Promise<T> {
  const pool = await openDatabase(":memory:", { threads: 2 });
  try {
    return await run(pool);
  } finally {
    await pool.close();
  }
}

/**
 * NDJSON lines of seeded facts as a stream that, after its first chunk, reads the setting on
 * another connection until it reads 1 (at most 2 s): the threads DuckDB had while the load ran.
 * The first chunk is a short string (a view of Node's Buffer pool: fact-block-thread.ts copies it).
 */
function watchedStream(lines: string[], other: DuckDBConnection, seen: number[]): AsyncIterable<string> {
  return (async function* () {
    yield `${lines.slice(0, 10).join("\n")}\n`;
    for (let tries = 0; tries < 200; tries++) {
      const threads = await threadsOf(other);
      seen.push(threads);
      if (threads === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    yield `${lines.slice(10).join("\n")}\n`;
  })();
}

describe("DuckDB's threads during a load", () => {
  const lines = [...generateSeedFacts({ days: 1, rows: 2000, seed: 3 })].map((f) => JSON.stringify(f));

  it("appends a source's facts on one thread, then gives every thread back", async () => {
    await withPool((pool) =>
      pool.use((load) =>
        pool.use(async (other) => {
          const seen: number[] = [];
          const counts = await ingestFacts(load, createDictionaries(), new Map(), { ndjsonStream: watchedStream(lines, other, seen) });
          expect(counts.supply + counts.demand).toBe(lines.length);
          expect(seen.at(-1)).toBe(1);
          expect(await threadsOf(other)).toBe(2);
        }),
      ),
    );
  });

  it("gives the threads back when the load fails", async () => {
    await withPool((pool) =>
      pool.use(async (load) => {
        const bad = [...lines.slice(0, 50), "{not json", ...lines.slice(50)];
        await expect(ingestFacts(load, createDictionaries(), new Map(), { ndjsonStream: oneChunk(bad) })).rejects.toMatchObject({ line: 51 });
        expect(await threadsOf(load)).toBe(2);
      }),
    );
  });

  it("leaves the setting alone for facts given as objects", async () => {
    await withPool((pool) =>
      pool.use((load) =>
        pool.use(async (other) => {
          const seen: number[] = [];
          async function* facts() {
            yield supply();
            seen.push(await threadsOf(other));
            yield supply({ placement_id: "pl-2" });
          }
          await ingestFacts(load, createDictionaries(), new Map(), facts());
          expect(seen).toEqual([2]);
          expect(await threadsOf(load)).toBe(2);
        }),
      ),
    );
  });
});

/** The lines as one chunk. */
function oneChunk(lines: string[]): AsyncIterable<string> {
  return (async function* () {
    yield `${lines.join("\n")}\n`;
  })();
}
