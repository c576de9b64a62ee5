// The report-semantics cases of test/store/report.test.ts as one shared list: `defineReportCases`
// registers them against any ReportStore. report.test.ts here runs them on ClickHouse,
// duckdb-parity.test.ts on DuckDB (so the list itself is checked against the reference store).
// test/store/report.test.ts can switch to this list and drop its own copy.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreError, type Fact, type ReportStore } from "../../service/store/index.js";
import { demand, demandQuery, supply, supplyQuery } from "./helpers.js";

/** The hand-made data set every case runs on. */
export const REPORT_FACTS: Fact[] = [
  // Two hours of 2026-10-01 for pub-1, at the first and the last hour of the day.
  supply({ date_hour: "2026-10-01T00:00:00", app_bundle_id: "com.a", placement_id: "pl-1", ad_format: 1, platform: 1, country: "USA", request: 100, response: 80, impression: 60, revenue: 1.5 }),
  supply({ date_hour: "2026-10-01T23:00:00", app_bundle_id: "com.b", placement_id: "pl-2", ad_format: 2, platform: 2, country: "GBR", request: 200, response: 100, impression: 50, revenue: 2.25 }),
  // Zero denominators: no responses, no impressions.
  supply({ date_hour: "2026-10-02T05:00:00", app_bundle_id: "com.a", placement_id: "pl-1", ad_format: 1, platform: 1, country: "USA", request: 50, response: 0, impression: 0, revenue: 0 }),
  // Rounding: thirds. Platform 10 sorts after 2 (numbers, not text); "com.B" before "com.a" (bytes).
  supply({ date_hour: "2026-10-03T05:00:00", app_bundle_id: "com.B", placement_id: "pl-3", ad_format: 4, platform: 10, country: "DEU", request: 3, response: 2, impression: 3, revenue: 1 / 3 }),
  // Outside October, just before and just after.
  supply({ date_hour: "2026-09-30T23:00:00", request: 7 }),
  supply({ date_hour: "2026-11-01T00:00:00", request: 9 }),
  // Another publisher.
  supply({ date_hour: "2026-10-01T05:00:00", publisher_id: "pub-2", app_bundle_id: "com.z", country: "FRA", request: 1000, response: 500, impression: 400, revenue: 10 }),
  demand({ date_hour: "2026-10-01T05:00:00", bidder_id: "dsp-1", ad_format: 3, platform: 1, request: 100, response: 50, impression: 20, revenue: 0.9 }),
  demand({ date_hour: "2026-10-02T06:00:00", bidder_id: "dsp-1", ad_format: 1, platform: 2, request: 300, response: 150, impression: 100, revenue: 0.3 }),
  demand({ date_hour: "2026-10-01T05:00:00", bidder_id: "dsp-2", request: 5000 }),
];

/** A store `open` gives, loaded with REPORT_FACTS before the file's tests and closed after them; the getter returns it. */
export function loadedReportStore(open: () => Promise<ReportStore>): () => ReportStore {
  let store: ReportStore | undefined;
  beforeAll(async () => {
    store = await open();
    await store.ingest(REPORT_FACTS);
  });
  afterAll(async () => {
    await store?.close();
  });
  return () => store!;
}

/**
 * Registers the cases. `current` returns the store the cases query: opened and loaded with
 * REPORT_FACTS by the caller's beforeAll (the store is created there, so this stays engine-free).
 */
export function defineReportCases(current: () => ReportStore): void {
  // A getter, so the cases below read exactly as in test/store/report.test.ts.
  const store = {
    report: (...args: Parameters<ReportStore["report"]>) => current().report(...args),
  };

  describe("time range", () => {
    it("includes an hourly fact when start ≤ its hour ≤ end (both bounds inclusive)", async () => {
      const result = await store.report(supplyQuery({ start: "2026-10-01T00:00:00", end: "2026-10-01T23:00:00", metrics: ["request"] }));
      expect(result.rows).toEqual([{ request: 300 }]);
    });

    it("excludes an hour that starts before start, or after end", async () => {
      const late = await store.report(supplyQuery({ start: "2026-10-01T00:00:01", end: "2026-10-01T23:00:00", metrics: ["request"] }));
      expect(late.rows).toEqual([{ request: 200 }]);
      const early = await store.report(supplyQuery({ start: "2026-10-01T00:00:00", end: "2026-10-01T22:59:59", metrics: ["request"] }));
      expect(early.rows).toEqual([{ request: 100 }]);
    });

    it("reads whole days and partial days alike (rollup and hourly facts agree)", async () => {
      const whole = await store.report(supplyQuery({ start: "2026-09-30T00:00:00", end: "2026-11-01T23:59:59", metrics: ["request"] }));
      const ragged = await store.report(supplyQuery({ start: "2026-09-30T22:30:00", end: "2026-11-01T00:10:00", metrics: ["request"] }));
      expect(whole.rows).toEqual([{ request: 369 }]);
      expect(ragged.rows).toEqual(whole.rows);
    });

    it("gives the zero row when start is after end", async () => {
      const result = await store.report(supplyQuery({ start: "2026-10-05T00:00:00", end: "2026-10-01T00:00:00", metrics: ["request"] }));
      expect(result).toEqual({ total: 1, rows: [{ request: 0 }] });
    });
  });

  describe("rows", () => {
    it("hold exactly the requested dimensions and metrics, with dates, hours and integers in their forms", async () => {
      const result = await store.report(
        supplyQuery({
          end: "2026-10-01T23:59:59",
          metrics: ["revenue", "request", "response", "impression", "fill_rate", "render_rate", "ecpm"],
          dimensions: ["date", "date_hour", "platform", "ad_format", "app_bundle_id", "country", "placement_id", "publisher_id"],
        }),
      );
      expect(result.rows[0]).toEqual({
        date: "2026-10-01",
        date_hour: "2026-10-01T00:00:00",
        platform: 1,
        ad_format: 1,
        app_bundle_id: "com.a",
        country: "USA",
        placement_id: "pl-1",
        publisher_id: "pub-1",
        revenue: 1.5,
        request: 100,
        response: 80,
        impression: 60,
        fill_rate: 0.8,
        render_rate: 0.75,
        ecpm: 25,
      });
      for (const row of result.rows) for (const key of ["platform", "ad_format", "request"]) expect(Number.isInteger(row[key])).toBe(true);
    });

    it("list dimensions first, then metrics in the requested order, each once", async () => {
      const result = await store.report(supplyQuery({ metrics: ["ecpm", "request", "ecpm", "revenue"], dimensions: ["country"] }));
      expect(Object.keys(result.rows[0])).toEqual(["country", "ecpm", "request", "revenue"]);
    });

    it("derive fill_rate, render_rate (fractions) and ecpm, with 0 for a zero denominator", async () => {
      const result = await store.report(
        supplyQuery({ start: "2026-10-02T00:00:00", end: "2026-10-02T23:59:59", metrics: ["fill_rate", "render_rate", "ecpm"] }),
      );
      expect(result.rows).toEqual([{ fill_rate: 0, render_rate: 0, ecpm: 0 }]);
      const nothing = await store.report(supplyQuery({ scope: { publisher_ids: ["nobody"] }, metrics: ["fill_rate", "render_rate", "ecpm"] }));
      expect(nothing.rows).toEqual([{ fill_rate: 0, render_rate: 0, ecpm: 0 }]);
    });

    it("round floats to 6 decimals", async () => {
      const result = await store.report(
        supplyQuery({ start: "2026-10-03T00:00:00", end: "2026-10-03T23:59:59", metrics: ["revenue", "fill_rate", "render_rate", "ecpm"] }),
      );
      // revenue 1/3; fill 2/3; render 3/2 (more impressions than responses is reported as is); ecpm 1000/9.
      expect(result.rows).toEqual([{ revenue: 0.333333, fill_rate: 0.666667, render_rate: 1.5, ecpm: 111.111111 }]);
    });
  });

  describe("order, limit and total", () => {
    it("sorts ascending by the dimensions in the order requested", async () => {
      const byCountry = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["country", "date"] }));
      expect(byCountry.rows.map((r) => [r.country, r.date])).toEqual([
        ["DEU", "2026-10-03"],
        ["GBR", "2026-10-01"],
        ["USA", "2026-10-01"],
        ["USA", "2026-10-02"],
      ]);
      const byDate = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["date", "country"] }));
      expect(byDate.rows.map((r) => [r.date, r.country])).toEqual([
        ["2026-10-01", "GBR"],
        ["2026-10-01", "USA"],
        ["2026-10-02", "USA"],
        ["2026-10-03", "DEU"],
      ]);
    });

    it("sorts integers as numbers and strings by their bytes", async () => {
      const platforms = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["platform"] }));
      expect(platforms.rows.map((r) => r.platform)).toEqual([1, 2, 10]);
      const apps = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["app_bundle_id"] }));
      expect(apps.rows.map((r) => r.app_bundle_id)).toEqual(["com.B", "com.a", "com.b"]);
    });

    it("counts every row in total, before the limit", async () => {
      const result = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["country"], limit: 2 }));
      expect(result.total).toBe(3);
      expect(result.rows).toEqual([
        { country: "DEU", request: 3 },
        { country: "GBR", request: 200 },
      ]);
    });

    it("gives exactly one row, of zeros, without dimensions when nothing matches", async () => {
      const result = await store.report(supplyQuery({ filters: { country: ["JPN"] }, metrics: ["revenue", "request", "response", "impression", "ecpm"] }));
      expect(result).toEqual({ total: 1, rows: [{ revenue: 0, request: 0, response: 0, impression: 0, ecpm: 0 }] });
    });

    it("gives no rows, and total 0, with dimensions when nothing matches", async () => {
      const result = await store.report(supplyQuery({ filters: { country: ["JPN"] }, dimensions: ["date"] }));
      expect(result).toEqual({ total: 0, rows: [] });
    });
  });

  describe("filters", () => {
    it("keep only rows whose value is listed", async () => {
      const result = await store.report(supplyQuery({ metrics: ["request"], filters: { country: ["USA", "DEU"] } }));
      expect(result.rows).toEqual([{ request: 153 }]);
      const formats = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["ad_format"], filters: { ad_format: [2, 4] } }));
      expect(formats.rows).toEqual([
        { ad_format: 2, request: 200 },
        { ad_format: 4, request: 3 },
      ]);
    });

    it("combine: a row must pass every filter", async () => {
      const result = await store.report(
        supplyQuery({ metrics: ["request"], filters: { country: ["USA", "GBR"], platform: [1], app_bundle_id: ["com.a"], placement_id: ["pl-1"] } }),
      );
      expect(result.rows).toEqual([{ request: 150 }]);
    });

    it("treat an empty array as no filter", async () => {
      const all = await store.report(supplyQuery({ metrics: ["request"] }));
      const empty = await store.report(supplyQuery({ metrics: ["request"], filters: { country: [], ad_format: [], platform: [], app_bundle_id: [], placement_id: [] } }));
      expect(empty).toEqual(all);
    });

    it("match nothing for a value never seen", async () => {
      const result = await store.report(supplyQuery({ metrics: ["request"], filters: { app_bundle_id: ["com.nope"] } }));
      expect(result.rows).toEqual([{ request: 0 }]);
    });
  });

  describe("scope", () => {
    it("shows a supply account only its publishers' rows", async () => {
      const mine = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["publisher_id"] }));
      expect(mine.rows).toEqual([{ publisher_id: "pub-1", request: 353 }]);
      const both = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["publisher_id"], scope: { publisher_ids: ["pub-1", "pub-2"] } }));
      expect(both.rows).toEqual([
        { publisher_id: "pub-1", request: 353 },
        { publisher_id: "pub-2", request: 1000 },
      ]);
      const none = await store.report(supplyQuery({ metrics: ["request"], scope: { publisher_ids: [] } }));
      expect(none.rows).toEqual([{ request: 0 }]);
    });

    it("shows a demand account only its bidder's rows", async () => {
      const result = await store.report(demandQuery({ metrics: ["request", "revenue"], dimensions: ["date", "ad_format"] }));
      expect(result.rows).toEqual([
        { date: "2026-10-01", ad_format: 3, request: 100, revenue: 0.9 },
        { date: "2026-10-02", ad_format: 1, request: 300, revenue: 0.3 },
      ]);
      const other = await store.report(demandQuery({ metrics: ["request"], scope: { bidder_id: "dsp-2" } }));
      expect(other.rows).toEqual([{ request: 5000 }]);
    });

    it("never mixes the sides", async () => {
      const result = await store.report(supplyQuery({ metrics: ["request"], scope: { publisher_ids: ["dsp-1"] } }));
      expect(result.rows).toEqual([{ request: 0 }]);
    });
  });

  describe("demand", () => {
    it("filters by ad_format and ignores the supply-only filters", async () => {
      const result = await store.report(demandQuery({ metrics: ["request"], filters: { ad_format: [1], country: ["JPN"], platform: [9] } }));
      expect(result.rows).toEqual([{ request: 300 }]);
    });

    it("refuses the supply-only dimensions", async () => {
      for (const dimension of ["app_bundle_id", "country", "placement_id", "publisher_id"] as const) {
        await expect(store.report(demandQuery({ dimensions: [dimension] }))).rejects.toMatchObject({ code: "ADX_ERR_STORE_QUERY_INVALID" });
      }
    });
  });

  describe("malformed queries", () => {
    it.each([
      ["an unknown metric", { metrics: ["clicks"] }],
      ["no metric", { metrics: [] }],
      ["an unknown dimension", { dimensions: ["city"] }],
      ["a limit of 0", { limit: 0 }],
      ["a limit over 50000", { limit: 50_001 }],
      ["a start that is not a time", { start: "2026-10-01" }],
      ["an end that is not a real time", { end: "2026-02-30T00:00:00" }],
      ["a bidder scope on the supply side", { scope: { bidder_id: "dsp-1" } }],
      ["a filter that is not an array", { filters: { country: "USA" } }],
      ["a non-integer ad_format", { filters: { ad_format: ["1"] } }],
    ])("throws ADX_ERR_STORE_QUERY_INVALID for %s", async (_name, change) => {
      const error = await store.report(supplyQuery(change as never)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({ code: "ADX_ERR_STORE_QUERY_INVALID" });
    });
  });
}
