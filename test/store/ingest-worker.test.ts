// Loads that read a source (seed, NDJSON file or stream) on a worker thread: the same rows as
// the same facts encoded on the loading thread, bad lines named by their line with nothing
// committed, and failures of the worker's reading surfacing as the load's failure.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BLOCK_FACTS } from "../../service/store/fact-block-thread.js";
import { FactError, generateSeedFacts, openStore, type Fact, type FactError as FactErrorType, type ReportQuery, type ReportStore, type SeedOptions } from "../../service/store/index.js";
import { demandQuery, supplyQuery } from "./helpers.js";

const SEED: SeedOptions = { days: 3, rows: 40_000, seed: 11 };
const PUBLISHERS = Array.from({ length: 10 }, (_, i) => `pub-${i + 1}`);
const BIDDERS = Array.from({ length: 6 }, (_, i) => `dsp-${i + 1}`);

/** Every report row at the finest grain, both sides, all accounts' data. */
async function everyRow(store: ReportStore): Promise<unknown[]> {
  const supply = supplyQuery({
    start: "2026-10-01T00:00:00",
    metrics: ["request", "response", "impression", "revenue"],
    dimensions: ["date_hour", "publisher_id", "app_bundle_id", "placement_id", "ad_format", "platform", "country"],
    scope: { publisher_ids: [...PUBLISHERS, "pub-x"] },
  });
  const daily: ReportQuery = { ...supply, dimensions: ["date", "app_bundle_id", "country"] };
  const rows: unknown[] = [(await store.report(supply)).rows, (await store.report(daily)).rows, (await store.report({ ...supply, dimensions: [] })).rows];
  for (const bidder of BIDDERS) rows.push((await store.report(demandQuery({ start: "2026-10-01T00:00:00", metrics: ["request", "impression", "revenue"], dimensions: ["date_hour", "ad_format", "platform"], scope: { bidder_id: bidder } }))).rows);
  return rows;
}

async function withStore<T>(run: (store: ReportStore) => Promise<T>): Promise<T> {
  const store = await openStore({ db: ":memory:", duckdbThreads: 1 });
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

let dir: string;
let facts: Fact[];
let ndjson: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "adxkit-ingest-worker-"));
  facts = [...generateSeedFacts(SEED)];
  // One app's name in characters of several bytes, so that stream chunks cut through them.
  facts = facts.map((f) => (f.side === "supply" && f.app_bundle_id === "com.example.game01" ? { ...f, app_bundle_id: "com.例え.ゲーム01" } : f));
  ndjson = `${facts.map((f) => JSON.stringify(f)).join("\n")}\n`;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a load read on a worker thread", () => {
  it("gives the same report rows as the same facts encoded on the loading thread (seed, NDJSON file, NDJSON stream)", { timeout: 120_000 }, async () => {
    expect(facts.length).toBeGreaterThan(BLOCK_FACTS);
    const inThread = await withStore(async (store) => {
      expect(await store.ingest(facts)).toBe(facts.length);
      return everyRow(store);
    });
    expect((inThread[0] as unknown[]).length).toBeGreaterThan(1000);
    expect(JSON.stringify(inThread)).toContain("com.例え.ゲーム01");

    const seeded = await withStore(async (store) => {
      const inThreadSeed = [...generateSeedFacts(SEED)];
      expect(await store.ingest({ seed: SEED })).toBe(inThreadSeed.length);
      return everyRow(store);
    });
    const reference = await withStore(async (store) => {
      await store.ingest(generateSeedFacts(SEED));
      return everyRow(store);
    });
    expect(seeded).toEqual(reference);

    const file = join(dir, "facts.ndjson");
    await writeFile(file, ndjson);
    const fromFile = await withStore(async (store) => {
      expect(await store.ingest({ ndjsonFile: file })).toBe(facts.length);
      return everyRow(store);
    });
    expect(fromFile).toEqual(inThread);

    // Chunks of 7,919 bytes: lines and multi-byte characters cut anywhere.
    const bytes = Buffer.from(ndjson);
    const chunks = Array.from({ length: Math.ceil(bytes.length / 7919) }, (_, i) => bytes.subarray(i * 7919, (i + 1) * 7919));
    const fromStream = await withStore(async (store) => {
      expect(await store.ingest({ ndjsonStream: Readable.from(chunks) })).toBe(facts.length);
      return everyRow(store);
    });
    expect(fromStream).toEqual(inThread);
  });

  it("refuses a bad line in the middle of a block after the first, naming it, reports every bad line, and commits nothing", { timeout: 120_000 }, async () => {
    const lines = ndjson.trimEnd().split("\n");
    const badAt = BLOCK_FACTS + 5_000;
    lines[badAt - 1] = lines[badAt - 1].replace(/"impression":\d+/, '"impression":-3');
    lines[badAt + 9] = "{not json";
    const file = join(dir, "bad.ndjson");
    await writeFile(file, `${lines.join("\n")}\n`);
    await withStore(async (store) => {
      await store.ingest([facts[0]]);
      const before = await everyRow(store);
      const bad: FactErrorType[] = [];
      const error = await store.ingest({ ndjsonFile: file, onBadLine: (e) => bad.push(e) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FactError);
      expect(error).toMatchObject({ code: "ADX_ERR_STORE_FACT_INVALID", line: badAt, reason: 'field "impression" must be a non-negative integer', message: `line ${badAt}: field "impression" must be a non-negative integer` });
      expect(bad.map((e) => [e.line, e.reason])).toEqual([
        [badAt, 'field "impression" must be a non-negative integer'],
        [badAt + 10, "not valid JSON"],
      ]);
      expect(await everyRow(store)).toEqual(before);

      // The same through a stream; and the store stays usable, its dictionaries rolled back.
      const streamed = await store.ingest({ ndjsonStream: Readable.from([Buffer.from(`${lines.join("\n")}\n`)]) }).catch((e: unknown) => e);
      expect(streamed).toMatchObject({ line: badAt });
      expect(await everyRow(store)).toEqual(before);
      expect(await store.ingest({ ndjsonStream: Readable.from([ndjson]) })).toBe(facts.length);
      expect(await everyRow(store)).not.toEqual(before);
    });
  });

  it("fails the load, loading nothing, when its source cannot be read or breaks midway", async () => {
    await withStore(async (store) => {
      await expect(store.ingest({ ndjsonFile: join(dir, "missing.ndjson") })).rejects.toThrow(/ENOENT/);
      async function* breaking(): AsyncGenerator<Buffer> {
        yield Buffer.from(ndjson.slice(0, 200_000));
        throw new Error("pipe closed");
      }
      await expect(store.ingest({ ndjsonStream: breaking() })).rejects.toThrow("pipe closed");
      await expect(store.ingest({ seed: { days: 0, rows: 10 } })).rejects.toThrow(/days must be an integer/);
      expect((await store.report(supplyQuery({ metrics: ["request"], scope: { publisher_ids: PUBLISHERS } }))).rows).toEqual([{ request: 0 }]);
      expect(await store.ingest({ seed: { days: 1, rows: 10 } })).toBe(11);
    });
  });
});
