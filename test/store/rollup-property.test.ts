// Property: the rollups change no answer. The same facts (loaded in several parts, a part
// sometimes twice, so that a key has rows from several loads) in two DuckDB stores, one reading
// rollups wherever the plan may, the other only the hourly facts: every random query gives the
// same rows and total in both, whether the rollups' periods were compacted after some loads,
// after every load in the background (while the queries run), or never. Many queries are
// answered from rollups read without grouping (one publisher, a table's every dimension), or read
// ungrouped and merged by the writer (both publishers, whose facts share the apps).
// 40 runs take a few seconds on an idle machine; the timeout leaves a busy one room.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openStore, type ReportQuery } from "../../service/store/index.js";
import { DuckDBReportStore } from "../../service/store/duckdb/store.js";
import { rollupFactArb, rollupQueryArb } from "./rollup-model.js";

/** Whole days by every dimension of a daily rollup, for one account's one publisher: read without grouping where compacted. */
const whole = { start: "2026-09-01T00:00:00", end: "2026-11-30T23:59:59", filters: {}, limit: 50_000 };
const readWithoutGrouping: ReportQuery[] = [
  { ...whole, side: "supply", metrics: ["request", "revenue", "fill_rate"], dimensions: ["date", "country"], scope: { publisher_ids: ["pub-1"] } },
  { ...whole, side: "supply", metrics: ["impression", "ecpm"], dimensions: ["country", "date"], filters: { country: ["USA"] }, scope: { publisher_ids: ["pub-2"] } },
  { ...whole, side: "demand", metrics: ["request", "revenue"], dimensions: ["date", "ad_format", "platform"], scope: { bidder_id: "dsp-1" } },
];
/** By app over both publishers (each app is under both): rows merged by the writer where compacted. */
const mergedByWriter: ReportQuery[] = [
  { ...whole, side: "supply", metrics: ["revenue", "request", "ecpm", "fill_rate"], dimensions: ["date", "country", "app_bundle_id"], scope: { publisher_ids: ["pub-1", "pub-2"] } },
  { ...whole, side: "supply", metrics: ["impression", "render_rate"], dimensions: ["app_bundle_id", "date"], filters: { country: ["DEU"] }, scope: { publisher_ids: ["pub-2", "pub-1"] }, limit: 3 },
];

describe("rollups on DuckDB", () => {
  it("give the same rows as the hourly facts alone, compacted or not", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rollupFactArb, { maxLength: 150 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        fc.constantFrom(0, Number.POSITIVE_INFINITY),
        fc.array(rollupQueryArb, { minLength: 1, maxLength: 6 }),
        async (facts, loads, again, compactAfter, compactEveryMs, queries) => {
          const [withRollups, hourlyOnly] = await Promise.all([DuckDBReportStore.open(":memory:", { compactEveryMs }), openStore({ db: ":memory:", rollups: false })]);
          try {
            const size = Math.ceil(facts.length / loads);
            const parts: (typeof facts)[] = [];
            for (let i = 0; i < facts.length; i += size) parts.push(facts.slice(i, i + size));
            if (again && parts.length > 0) parts.push(parts[0]);
            for (const [i, part] of parts.entries()) {
              await withRollups.ingest(part);
              await hourlyOnly.ingest(part);
              if (compactAfter[i]) await withRollups.compactRollups();
            }
            for (const query of [...queries, ...readWithoutGrouping, ...mergedByWriter]) expect(await withRollups.report(query)).toEqual(await hourlyOnly.report(query));
          } finally {
            await Promise.all([withRollups.close(), hourlyOnly.close()]);
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 240_000);
});
