// Report rows written in JS (service/store/duckdb/report-rows.ts) are byte for byte the rows
// DuckDB's json_object, ORDER BY and LIMIT make (a store opened with maxRowsInJs 0): for random
// facts and queries, with names that need escaping or sort differently as bytes than as UTF-16.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Fact, ReportQuery } from "../../service/store/index.js";
import { demandFactArb, metricsArb, queryArb, supplyFactArb } from "./report-model.js";
import { supply, supplyQuery } from "./helpers.js";
import { answersOfTwoStores } from "./two-stores.js";
import { RollupPeriods } from "../../service/store/duckdb/rollup-periods.js";
import { planReport } from "../../service/store/plan.js";

/** Names JSON escapes (quote, backslash, control characters, U+007F) or that sort differently as UTF-8 bytes than as UTF-16 (U+FFFD against an astral character), and the empty one. */
const NAMES = ['a"b', "back\\slash", "tab\there", "line\nend", "\u0001\u001f", "del\u007f", "é", "\uFFFD", "\u{1F600}", "", "z", "Z", "com.a"];

/** Each query's answer from a store writing rows in JS and one leaving them to DuckDB (one thread each: both sum each group's doubles in the same order). */
const bothAnswers = (facts: Fact[], queries: ReportQuery[]) => answersOfTwoStores([{ threads: 1 }, { threads: 1, maxRowsInJs: 0 }], [facts], queries);

describe("report rows written in JS", () => {
  it("are DuckDB's rows, byte for byte, for random facts and queries", { timeout: 240_000 }, async () => {
    const namedSupplyArb = fc.record({ fact: supplyFactArb, app: fc.constantFrom(...NAMES), placement: fc.constantFrom(...NAMES) }).map(({ fact, app, placement }) => ({ ...fact, app_bundle_id: app, placement_id: placement }) as Fact);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(namedSupplyArb, supplyFactArb, demandFactArb), { maxLength: 120 }), fc.array(queryArb, { minLength: 1, maxLength: 6 }), async (facts, queries) => {
        const [inJs, inDuckDB] = await bothAnswers(facts, queries);
        expect(inJs).toEqual(inDuckDB);
      }),
      // 20 runs: ~7 s quiet, well inside the timeout on a busy machine (40 took 43 s in a busy suite
      // and reached 240 s once beside another suite); each run draws new facts, so runs add up across CI.
      { numRuns: 20 },
    );
  });

  it("cut at the limit, counting every row, and in the order of every dimension", async () => {
    const facts = NAMES.flatMap((name, i) => [
      supply({ app_bundle_id: name, country: "USA", date_hour: "2026-10-01T05:00:00", request: i + 1, response: i, impression: 3, revenue: (i + 1) / 7 }),
      supply({ app_bundle_id: name, country: "GBR", date_hour: "2026-10-02T23:00:00", request: 2 * i, response: 0, impression: 0, revenue: 1e-7 * i }),
    ]);
    const queries = [
      supplyQuery({ dimensions: ["app_bundle_id", "country", "date_hour"], metrics: ["revenue", "request", "fill_rate", "ecpm"], limit: 5 }),
      supplyQuery({ dimensions: ["country", "date", "app_bundle_id"], metrics: ["render_rate", "impression"] }),
    ];
    const [inJs, inDuckDB] = await bothAnswers(facts, queries);
    expect(inJs).toEqual(inDuckDB);
    expect(inJs[0]).toMatch(/^26 \[/);
  });

  it("a count summed past 2^53 written exactly (DuckDB writes that report)", async () => {
    const facts = [supply({ request: Number.MAX_SAFE_INTEGER }), supply({ date_hour: "2026-10-01T06:00:00", request: 2 }), supply({ app_bundle_id: "com.other", request: 5 })];
    const [inJs, inDuckDB] = await bothAnswers(facts, [supplyQuery({ dimensions: ["date", "app_bundle_id"], metrics: ["request", "fill_rate"] })]);
    expect(inJs).toEqual(inDuckDB);
    expect(inJs[0]).toContain('"request":9007199254740993');
  });

  it("an app under several publishers, its rows merged by the writer once ordered, on the event loop and on the thread", async () => {
    // Revenue of many decimals: three rows of a group add up to different doubles in different orders.
    const facts = Array.from({ length: 600 }, (_, i) =>
      supply({
        publisher_id: `pub-${1 + (i % 3)}`,
        app_bundle_id: NAMES[(i >> 2) % NAMES.length],
        country: ["USA", "GBR"][(i >> 3) % 2],
        date_hour: `2026-10-0${1 + ((i >> 4) % 3)}T0${i % 10}:00:00`,
        request: 1000 + i,
        response: i % 17,
        impression: i % 13,
        revenue: (i % 29) * 0.1 + i / 3,
      }),
    );
    const scope = { publisher_ids: ["pub-1", "pub-2", "pub-3"] };
    const queries = [
      supplyQuery({ scope, dimensions: ["date", "country", "app_bundle_id"], metrics: ["revenue", "request", "fill_rate", "ecpm", "render_rate"] }),
      supplyQuery({ scope, dimensions: ["app_bundle_id", "date"], filters: { country: ["GBR"] }, metrics: ["ecpm", "impression"], limit: 7 }),
    ];
    const periods = new RollupPeriods();
    periods.set([]);
    for (const query of queries) expect(planReport(query, { uniqueRows: periods.uniqueRows }).rowsMergedByWriter).toBe(true);
    const [inJs, inDuckDB] = await bothAnswers(facts, queries);
    expect(inJs).toEqual(inDuckDB);
    expect(inJs[0]).toMatch(/^78 \[/);
    expect(inJs[1]).toMatch(/^39 \[/);
    const [onThread] = await answersOfTwoStores([{ threads: 1, writerFromRows: 1 }, { threads: 1, maxRowsInJs: 0 }], [facts], queries);
    expect(onThread).toEqual(inDuckDB);
  });

  it("an app's counts under two publishers summed past 2^53 written exactly (DuckDB writes that report)", async () => {
    const facts = [supply({ request: Number.MAX_SAFE_INTEGER - 1 }), supply({ publisher_id: "pub-2", request: 3 }), supply({ app_bundle_id: "com.other", request: 5 })];
    const query = supplyQuery({ scope: { publisher_ids: ["pub-1", "pub-2"] }, dimensions: ["date", "country", "app_bundle_id"], metrics: ["request", "fill_rate"] });
    const [inJs, inDuckDB] = await bothAnswers(facts, [query]);
    expect(inJs).toEqual(inDuckDB);
    expect(inJs[0]).toContain('"request":9007199254740993');
  });

  it("revenue of many decimals and large counts", async () => {
    const metrics = fc.sample(fc.record(metricsArb), { numRuns: 200, seed: 18 });
    const facts = metrics.map((m, i) => supply({ ...m, app_bundle_id: `app-${i % 37}`, revenue: m.revenue * 1234.567891 + i / 3, request: m.request * 1e9 }));
    const [inJs, inDuckDB] = await bothAnswers(facts, [supplyQuery({ dimensions: ["app_bundle_id"], metrics: ["revenue", "request", "fill_rate", "ecpm"] })]);
    expect(inJs).toEqual(inDuckDB);
  });
});
