// The SQL builder: values are always bound, never spliced; time ranges split into whole days and hours.
import { describe, expect, it } from "vitest";
import { buildReport } from "../../service/store/duckdb/report-query.js";
import { timeRanges } from "../../service/store/time-ranges.js";
import { openStore } from "../../service/store/index.js";
import { supply, supplyQuery } from "./helpers.js";

const hostile = "x'); DROP TABLE accounts; --";

describe("buildReport", () => {
  it("binds every value from the query and splices none of them", () => {
    const query = supplyQuery({
      start: "2026-10-01T05:30:00",
      end: "2026-10-20T17:00:00",
      metrics: ["revenue", "ecpm"],
      dimensions: ["country", "date"],
      filters: { country: [hostile], app_bundle_id: ["com.\"quoted\""], placement_id: ["pl-$1"], ad_format: [3, 1], platform: [12345] },
      limit: 4321,
      scope: { publisher_ids: [hostile, "pub-';--"] },
    });
    const { sql, values } = buildReport(query);
    for (const text of [hostile, "quoted", "pl-$1", "pub-", "4321", "12345", "2026"]) expect(sql).not.toContain(text);
    expect(JSON.stringify(values, (_k, v) => (typeof v === "bigint" ? String(v) : v))).toContain("DROP TABLE");
    expect(values).toContain(4321);
  });

  it("only splices names from its own tables", () => {
    expect(() => buildReport(supplyQuery({ metrics: ["revenue; DROP TABLE accounts" as never] }))).toThrow(/unknown metric/);
    expect(() => buildReport(supplyQuery({ dimensions: ["constructor" as never] }))).toThrow(/not available/);
    expect(() => buildReport(supplyQuery({ metrics: ["toString" as never] }))).toThrow(/unknown metric/);
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

describe("timeRanges", () => {
  const t = (s: string) => Date.parse(`${s}Z`);

  it.each([
    ["whole days only", "2026-10-01T00:00:00", "2026-10-31T23:59:59", { days: [t("2026-10-01T00:00:00"), t("2026-10-31T00:00:00")], hours: [] }],
    ["an end at 23:00 still closes the day", "2026-10-01T00:00:00", "2026-10-01T23:00:00", { days: [t("2026-10-01T00:00:00"), t("2026-10-01T00:00:00")], hours: [] }],
    [
      "hours on both sides",
      "2026-10-01T05:30:00",
      "2026-10-04T02:00:00",
      { days: [t("2026-10-02T00:00:00"), t("2026-10-03T00:00:00")], hours: [[t("2026-10-01T06:00:00"), t("2026-10-01T23:00:00")], [t("2026-10-04T00:00:00"), t("2026-10-04T02:00:00")]] },
    ],
    ["no whole day", "2026-10-01T01:00:00", "2026-10-02T22:00:00", { hours: [[t("2026-10-01T01:00:00"), t("2026-10-02T22:00:00")]] }],
    ["within one hour: nothing", "2026-10-01T05:10:00", "2026-10-01T05:50:00", { hours: [[t("2026-10-01T06:00:00"), t("2026-10-01T05:00:00")]] }],
  ])("%s", (_name, start, end, want) => {
    expect(timeRanges(t(start), t(end), true)).toEqual(want);
  });

  it("uses hours only when the rollup cannot serve (date_hour)", () => {
    expect(timeRanges(t("2026-10-01T00:00:00"), t("2026-10-03T00:00:00"), false)).toEqual({ hours: [[t("2026-10-01T00:00:00"), t("2026-10-03T00:00:00")]] });
  });
});
