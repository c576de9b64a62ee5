// The report SQL, offline (no server): in both modes no value from the query is spliced into the
// text except through quoteString or a checked integer, the bound mode's text does not depend on
// the values at all, and malformed queries are refused before any SQL exists.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderReport } from "../../service/store/clickhouse/report-sql.js";
import { jsonLinesToArray } from "../../service/store/clickhouse/report.js";
import { planReport } from "../../service/store/plan.js";
import { SqlValues, quoteString, versionHasBoundParameters } from "../../service/store/clickhouse/sql.js";
import type { ReportQuery } from "../../service/store/index.js";
import { demandQuery, supplyQuery } from "../store/helpers.js";

const buildClickHouseReport = (connection: ReturnType<typeof fakeConnection>, query: ReportQuery) => renderReport(connection, planReport(query));
const fakeConnection = (bound: boolean) => ({ values: () => new SqlValues(bound), table: (name: string) => `adxkit.${name}` });
const text = fc.string({ unit: "binary", maxLength: 30 });
const queryWith = (placement: string, app: string, publisher: string): ReportQuery =>
  supplyQuery({
    metrics: ["revenue", "ecpm"],
    dimensions: ["placement_id", "date"],
    filters: { placement_id: [placement], app_bundle_id: [app], country: ["USA"], ad_format: [1, 2] },
    scope: { publisher_ids: [publisher] },
  });

describe("report SQL with bound parameters", () => {
  it("is the same text whatever the values, and carries them only as query_params", () => {
    const reference = buildClickHouseReport(fakeConnection(true), queryWith("a", "b", "c"));
    expect(reference.sql).toContain("placement_id IN ({p");
    expect(reference.sql).toMatch(/toDate\(\{p\d+:String\}\)/);
    fc.assert(
      fc.property(text, text, text, (placement, app, publisher) => {
        const built = buildClickHouseReport(fakeConnection(true), queryWith(placement, app, publisher));
        expect(built.sql).toBe(reference.sql);
        expect(built.countSql).toBe(reference.countSql);
        const params = Object.values(built.values.queryParams() ?? {});
        for (const value of [placement, app, publisher]) expect(params).toContain(value);
      }),
      { numRuns: 500 },
    );
  });
});

describe("report SQL with literals", () => {
  it("holds every string value only as its quoteString literal, and no placeholder", () => {
    fc.assert(
      fc.property(text, text, text, (placement, app, publisher) => {
        const built = buildClickHouseReport(fakeConnection(false), queryWith(placement, app, publisher));
        expect(built.values.queryParams()).toBeUndefined();
        for (const value of [placement, app, publisher]) expect(built.sql).toContain(quoteString(value));
        // Take the literals out: what remains is the same for any values.
        const skeleton = (sql: string, values: string[]) => values.reduce((s, v) => s.split(quoteString(v)).join("'?'"), sql);
        const reference = buildClickHouseReport(fakeConnection(false), queryWith("a", "b", "c"));
        expect(skeleton(built.sql, [placement, app, publisher])).toBe(skeleton(reference.sql, ["a", "b", "c"]));
      }),
      { numRuns: 500 },
    );
  });
});

describe("report SQL shape", () => {
  it("reads whole days from a daily rollup and the hours around them from the hourly facts", () => {
    const built = buildClickHouseReport(fakeConnection(false), supplyQuery({ start: "2026-10-01T12:00:00", end: "2026-10-05T05:00:00" }));
    expect(built.sql).toContain("adxkit.supply_daily_countries WHERE day BETWEEN toDate('2026-10-02') AND toDate('2026-10-04')");
    expect(built.sql.match(/adxkit\.supply_hourly/g)).toHaveLength(2);
    const hourly = buildClickHouseReport(fakeConnection(false), supplyQuery({ dimensions: ["date_hour"] }));
    expect(hourly.sql).not.toContain("supply_daily");
    const month = buildClickHouseReport(fakeConnection(false), supplyQuery({ dimensions: ["app_bundle_id"] }));
    expect(month.sql).toContain("adxkit.supply_monthly WHERE month BETWEEN toDate('2026-10-01') AND toDate('2026-10-01')");
  });

  it("scopes demand by bidder and ignores the supply-only filters", () => {
    const built = buildClickHouseReport(fakeConnection(false), demandQuery({ filters: { ad_format: [3], country: ["JPN"] } }));
    expect(built.sql).toContain("bidder_id IN ('dsp-1')");
    expect(built.sql).toContain("ad_format IN (3)");
    expect(built.sql).not.toContain("JPN");
  });

  it.each([
    ["an unknown metric", { metrics: ["clicks"] }],
    ["an unknown dimension", { dimensions: ["city"] }],
    ["a limit of 0", { limit: 0 }],
    ["a non-integer ad_format", { filters: { ad_format: ["1) OR (1"] } }],
    ["a fractional platform", { filters: { platform: [1.5] } }],
    ["a non-string country", { filters: { country: [7] } }],
  ])("refuses %s before building SQL", (_name, change) => {
    expect(() => buildClickHouseReport(fakeConnection(false), supplyQuery(change as never))).toThrow(expect.objectContaining({ code: "ADX_ERR_STORE_QUERY_INVALID" }));
  });

  it("knows which server versions bind parameters (the probe at open has the last word)", () => {
    expect(versionHasBoundParameters("18.16.1")).toBe(false);
    expect(versionHasBoundParameters("19.3.5")).toBe(false);
    expect(versionHasBoundParameters("19.11.3.11")).toBe(true);
    expect(versionHasBoundParameters("24.8.4.13")).toBe(true);
  });
});

describe("JSON lines to the rows' array, in the answer's bytes", () => {
  it.each([
    ["no rows", "", "[]", 0],
    ["one row", '{"a":1}\n', '[{"a":1}]', 1],
    ["rows whose strings hold escaped newlines, commas, brackets and text beyond ASCII", '{"a":"x\\ny, [z]"}\n{"a":"アプリ é"}\n', '[{"a":"x\\ny, [z]"},{"a":"アプリ é"}]', 2],
  ])("%s", (_, lines, array, rows) => {
    const answer = jsonLinesToArray(Buffer.from(lines, "utf8"));
    expect(answer.rows).toBe(rows);
    expect(answer.bytes.toString("utf8")).toBe(array);
    expect(JSON.parse(answer.bytes.toString("utf8"))).toHaveLength(rows);
  });
});
