// The engine-neutral report plan (service/store/plan.ts): time ranges split over the coarsest
// tables that answer exactly, the smallest of those tables, and the DuckDB rendering that binds
// every value and splices none.
import { describe, expect, it } from "vitest";
import { renderReport } from "../../service/store/duckdb/report-sql.js";
import { openStore } from "../../service/store/index.js";
import { planReport, readsFactDetail, splitTime, type FactTable } from "../../service/store/plan.js";
import { supply, supplyQuery } from "./helpers.js";

const hostile = "x'); DROP TABLE accounts; --";
const t = (s: string) => Date.parse(`${s}Z`);
const parts = (query: Parameters<typeof planReport>[0], options?: Parameters<typeof planReport>[1]) =>
  planReport(query, options).parts.map((p) => [p.table.name, new Date(p.from).toISOString().slice(0, 13), new Date(p.to).toISOString().slice(0, 13)]);

describe("planReport: which table answers each part of the range", () => {
  it("reads a whole month from the smallest monthly rollup that keeps what the query needs", () => {
    expect(parts(supplyQuery({ metrics: ["revenue"] }))).toEqual([["monthly_summary", "2026-10-01T00", "2026-10-01T00"]]);
    // Grouping by app_bundle_id needs a table that keeps it: the monthly rollup of every dimension.
    expect(parts(supplyQuery({ dimensions: ["app_bundle_id"] }))).toEqual([["monthly", "2026-10-01T00", "2026-10-01T00"]]);
    // So does a filter.
    expect(parts(supplyQuery({ filters: { placement_id: ["pl-1"] } }))).toEqual([["monthly", "2026-10-01T00", "2026-10-01T00"]]);
  });

  it("reads days when the query groups by date, hours when it groups by date_hour", () => {
    // By country: the daily rollup of the publisher and country alone; a format or platform needs the summary that keeps them.
    expect(parts(supplyQuery({ dimensions: ["date", "country"] }))).toEqual([["daily_countries", "2026-10-01T00", "2026-10-31T00"]]);
    expect(parts(supplyQuery({ dimensions: ["date", "country"], filters: { country: ["USA"] } }))).toEqual([["daily_countries", "2026-10-01T00", "2026-10-31T00"]]);
    expect(parts(supplyQuery({ dimensions: ["date", "country"], filters: { ad_format: [1] } }))).toEqual([["daily_summary", "2026-10-01T00", "2026-10-31T00"]]);
    expect(parts(supplyQuery({ dimensions: ["date", "platform"] }))).toEqual([["daily_summary", "2026-10-01T00", "2026-10-31T00"]]);
    // By app and country: the daily rollup of those alone; anything else it sums away needs the full one.
    expect(parts(supplyQuery({ dimensions: ["date", "app_bundle_id"] }))).toEqual([["daily_apps", "2026-10-01T00", "2026-10-31T00"]]);
    expect(parts(supplyQuery({ dimensions: ["date", "country", "app_bundle_id"], filters: { country: ["USA"] } }))).toEqual([["daily_apps", "2026-10-01T00", "2026-10-31T00"]]);
    expect(parts(supplyQuery({ dimensions: ["date", "app_bundle_id"], filters: { ad_format: [1] } }))).toEqual([["daily", "2026-10-01T00", "2026-10-31T00"]]);
    expect(parts(supplyQuery({ dimensions: ["date", "placement_id"] }))).toEqual([["daily", "2026-10-01T00", "2026-10-31T00"]]);
    expect(parts(supplyQuery({ dimensions: ["date_hour"] }))).toEqual([["hourly", "2026-10-01T00", "2026-10-31T23"]]);
  });

  it("tells the reports that read the facts' detail (a full table by day or hour) from those a summary or a month answers", () => {
    const detailed = (query: Parameters<typeof planReport>[0]) => readsFactDetail(planReport(query));
    expect(detailed(supplyQuery({ metrics: ["revenue"] }))).toBe(false);
    expect(detailed(supplyQuery({ dimensions: ["date", "country"] }))).toBe(false);
    expect(detailed(supplyQuery({ dimensions: ["app_bundle_id"] }))).toBe(false);
    expect(detailed(supplyQuery({ dimensions: ["date", "app_bundle_id"] }))).toBe(true);
    expect(detailed(supplyQuery({ dimensions: ["date", "placement_id"] }))).toBe(true);
    // A daily table of the scope, codes and countries alone is a summary, on either side.
    expect(detailed({ ...supplyQuery({ dimensions: ["date"] }), side: "demand", scope: { bidder_id: "dsp-1" } })).toBe(false);
    expect(detailed(supplyQuery({ dimensions: ["date_hour"] }))).toBe(true);
    // A ragged range reads some hours of the facts, whatever the rest reads.
    expect(detailed(supplyQuery({ start: "2026-09-29T05:30:00", end: "2026-11-02T01:00:00" }))).toBe(true);
    expect(detailed(supplyQuery({ metrics: ["revenue"] }))).toBe(false);
  });

  it("covers ragged edges with days and hours around the whole months", () => {
    const query = supplyQuery({ start: "2026-09-29T05:30:00", end: "2026-11-02T01:00:00" });
    expect(parts(query)).toEqual([
      ["hourly", "2026-09-29T06", "2026-09-29T23"],
      ["daily_countries", "2026-09-30T00", "2026-09-30T00"],
      ["monthly_summary", "2026-10-01T00", "2026-10-01T00"],
      ["daily_countries", "2026-11-01T00", "2026-11-01T00"],
      ["hourly", "2026-11-02T00", "2026-11-02T01"],
    ]);
  });

  it("reads only the hourly facts when rollups are off", () => {
    expect(parts(supplyQuery(), { rollups: false })).toEqual([["hourly", "2026-10-01T00", "2026-10-31T23"]]);
  });

  it("demand reads its own rollups", () => {
    const demand = { ...supplyQuery(), side: "demand" as const, scope: { bidder_id: "dsp-1" } };
    expect(parts(demand)).toEqual([["monthly", "2026-10-01T00", "2026-10-01T00"]]);
    expect(parts({ ...demand, dimensions: ["date"] })).toEqual([["daily", "2026-10-01T00", "2026-10-31T00"]]);
  });

  it("plans no part when no hour lies in the range, and takes scope, filters and metrics from the model", () => {
    const plan = planReport(supplyQuery({ start: "2026-10-01T05:10:00", end: "2026-10-01T05:50:00", metrics: ["ecpm", "revenue", "ecpm"], filters: { country: ["USA"], ad_format: [] } }));
    expect(plan.parts).toEqual([]);
    expect(plan.metrics.map((m) => m.name)).toEqual(["ecpm", "revenue"]);
    expect(plan.counters).toEqual(["revenue", "impression"]);
    expect(plan.filters).toEqual([{ dimension: "country", type: "string", values: ["USA"] }]);
    expect(plan.scope).toEqual({ dimension: "publisher_id", values: ["pub-1"] });
  });
});

describe("splitTime", () => {
  const hourly: FactTable = { side: "supply", name: "hourly", grain: "hour", dimensions: [] };
  const daily: FactTable = { side: "supply", name: "daily", grain: "day", dimensions: [] };
  const monthly: FactTable = { side: "supply", name: "monthly", grain: "month", dimensions: [] };
  const show = (list: ReturnType<typeof splitTime>) => list.map((p) => `${p.table.name} ${new Date(p.from).toISOString().slice(0, 13)}..${new Date(p.to).toISOString().slice(0, 13)}`);

  it.each([
    ["whole days only", "2026-10-01T00", "2026-10-31T23", [daily, hourly], ["daily 2026-10-01T00..2026-10-31T00"]],
    ["an end at 23:00 closes the day", "2026-10-01T00", "2026-10-01T23", [daily, hourly], ["daily 2026-10-01T00..2026-10-01T00"]],
    ["hours on both sides", "2026-10-01T06", "2026-10-04T02", [daily, hourly], ["hourly 2026-10-01T06..2026-10-01T23", "daily 2026-10-02T00..2026-10-03T00", "hourly 2026-10-04T00..2026-10-04T02"]],
    ["no whole day", "2026-10-01T01", "2026-10-02T22", [daily, hourly], ["hourly 2026-10-01T01..2026-10-02T22"]],
    ["a leap February", "2028-02-01T00", "2028-02-29T23", [monthly, daily, hourly], ["monthly 2028-02-01T00..2028-02-01T00"]],
    ["February one hour short", "2028-02-01T00", "2028-02-29T22", [monthly, daily, hourly], ["daily 2028-02-01T00..2028-02-28T00", "hourly 2028-02-29T00..2028-02-29T22"]],
    ["two months and a day", "2026-09-30T00", "2026-11-30T23", [monthly, daily, hourly], ["daily 2026-09-30T00..2026-09-30T00", "monthly 2026-10-01T00..2026-11-01T00"]],
  ])("%s", (_name, first, last, list, want) => {
    expect(show(splitTime(t(`${first}:00:00`), t(`${last}:00:00`), list))).toEqual(want);
  });

  it("gives nothing when the last hour is before the first", () => {
    expect(splitTime(t("2026-10-01T06:00:00"), t("2026-10-01T05:00:00"), [daily, hourly])).toEqual([]);
  });
});

describe("DuckDB rendering", () => {
  it("binds every value from the query and splices none of them", () => {
    const query = supplyQuery({
      start: "2026-10-01T05:30:00",
      end: "2026-10-20T17:00:00",
      metrics: ["revenue", "ecpm"],
      dimensions: ["country", "date"],
      filters: { country: [hostile], app_bundle_id: ['com."quoted"'], placement_id: ["pl-$1"], ad_format: [3, 1], platform: [12345] },
      limit: 4321,
      scope: { publisher_ids: [hostile, "pub-';--"] },
    });
    const report = renderReport(planReport(query), (_d, list) => list.map((_v, i) => 1000 + i));
    if (report.kind !== "copy") throw new Error(`a report with dimensions is copied, not ${report.kind}`);
    const { select, count, values } = report;
    for (const sql of [select, count]) for (const text of [hostile, "quoted", "pl-$1", "pub-", "4321", "12345", "2026", "1001"]) expect(sql).not.toContain(text);
    // String values travel as their dictionary codes, every number as a parameter.
    expect(values).toEqual(expect.arrayContaining([4321, 12345, 1000, 1001]));
  });

  it("only splices names from the model", () => {
    expect(() => planReport(supplyQuery({ metrics: ["revenue; DROP TABLE accounts" as never] }))).toThrow(/unknown metric/);
    expect(() => planReport(supplyQuery({ dimensions: ["constructor" as never] }))).toThrow(/not available/);
    expect(() => planReport(supplyQuery({ metrics: ["toString" as never] }))).toThrow(/unknown metric/);
    expect(() => planReport({ ...supplyQuery(), side: "__proto__" as never })).toThrow(/unknown side/);
  });

  it("survives hostile values at run time and leaves the database intact", async () => {
    const store = await openStore({ db: ":memory:" });
    try {
      await store.ingest([supply({ country: "USA" })]);
      await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
      const result = await store.report(supplyQuery({ filters: { country: [hostile] }, scope: { publisher_ids: [hostile] }, dimensions: ["country"] }));
      expect(result).toEqual({ total: 0, rows: [] });
      expect(await store.listAccounts()).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
