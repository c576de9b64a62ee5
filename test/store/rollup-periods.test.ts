// The rollups' periods: loads count themselves per day and month, compaction makes a period one
// row per key again, migration 7 compacts what older versions wrote, and no plan reads rows
// without grouping while a write may change them.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DuckDBReportStore } from "../../service/store/duckdb/store.js";
import { RollupPeriods } from "../../service/store/duckdb/rollup-periods.js";
import { renderReport } from "../../service/store/duckdb/report-sql.js";
import { planReport } from "../../service/store/plan.js";
import { openStore } from "../../service/store/index.js";
import { supply, supplyQuery } from "./helpers.js";

const DAY = Date.UTC(2026, 9, 1);
const MONTH = Date.UTC(2026, 9, 1);
const facts = [supply(), supply({ country: "DEU", request: 7 }), supply({ date_hour: "2026-10-02T03:00:00", app_bundle_id: "com.example.b" })];
/** By date and country for one publisher: the daily rollup by country, every dimension grouped or held. */
const byCountry = supplyQuery({ dimensions: ["date", "country"], metrics: ["request", "revenue", "fill_rate"] });

async function count(db: string, sql: string): Promise<number> {
  const instance = await DuckDBInstance.create(db);
  const connection = await instance.connect();
  try {
    return Number((await connection.runAndReadAll(sql)).getRowsJS()[0][0]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe("rollup periods", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "adxkit-periods-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("are one row per key after one load, mixed after a second, one row per key again once compacted", async () => {
    const db = join(dir, "periods.duckdb");
    const store = await DuckDBReportStore.open(db, { compactEveryMs: Number.POSITIVE_INFINITY });
    await store.ingest(facts);
    expect(store.mixedPeriods()).toEqual([]);
    const once = await store.report(byCountry);
    await store.ingest(facts);
    expect(store.mixedPeriods()).toEqual([
      { side: "supply", grain: "day", start: DAY },
      { side: "supply", grain: "day", start: DAY + 86_400_000 },
      { side: "supply", grain: "month", start: MONTH },
    ]);
    const twice = await store.report(byCountry);
    expect(twice.rows.map((r) => r.request)).toEqual(once.rows.map((r) => 2 * (r.request as number)));
    await store.close();
    expect(await count(db, "SELECT count(*) FROM supply_daily_countries")).toBe(6);

    const again = await DuckDBReportStore.open(db, { compactEveryMs: Number.POSITIVE_INFINITY });
    expect(again.mixedPeriods()).toHaveLength(3);
    expect(await again.compactRollups()).toBe(3);
    expect(again.mixedPeriods()).toEqual([]);
    expect(await again.report(byCountry)).toEqual(twice);
    await again.close();
    expect(await count(db, "SELECT count(*) FROM supply_daily_countries")).toBe(3);
    expect(await count(db, "SELECT count(*) FROM supply_monthly")).toBe(3);
    expect(await count(db, "SELECT max(loads) FROM rollup_periods")).toBe(1);
  });

  it("are compacted by a load once the interval has passed", async () => {
    const store = await DuckDBReportStore.open(":memory:", { compactEveryMs: 0 });
    try {
      await store.ingest(facts);
      await store.ingest(facts);
      // The compaction runs after the load, before the next write.
      await store.ingest([]);
      expect(store.mixedPeriods()).toEqual([]);
      expect((await store.report(byCountry)).rows.map((r) => r.request)).toEqual([14, 200, 200]);
    } finally {
      await store.close();
    }
  });

  it("let a plan read a compacted rollup without grouping only where every key dimension is grouped or held to one value", () => {
    const periods = new RollupPeriods();
    periods.set([{ side: "supply", grain: "day", start: DAY + 86_400_000 }]);
    const plan = (query = byCountry) => planReport(query, { uniqueRows: periods.uniqueRows });
    const october1 = { start: "2026-10-01T00:00:00", end: "2026-10-01T23:59:59" };
    expect(plan(supplyQuery({ ...byCountry, ...october1 })).rowsAreGroups).toBe(true);
    const sql = renderReport(plan(supplyQuery({ ...byCountry, ...october1 })), () => [1]);
    expect(sql.kind === "copy" && [sql.select, sql.columns?.sql]).toEqual([expect.not.stringMatching(/GROUP BY|SUM/), expect.not.stringMatching(/GROUP BY|SUM/)]);
    // October 2 was written by two loads.
    expect(plan().rowsAreGroups).toBe(false);
    // Two publishers, not grouped by: a country's rows of both are one group.
    expect(plan(supplyQuery({ ...byCountry, ...october1, scope: { publisher_ids: ["pub-1", "pub-2"] } })).rowsAreGroups).toBe(false);
    // The country not grouped by, unless a filter holds it to one value.
    expect(plan(supplyQuery({ ...byCountry, ...october1, dimensions: ["date"] })).rowsAreGroups).toBe(false);
    expect(plan(supplyQuery({ ...byCountry, ...october1, dimensions: ["date"], filters: { country: ["USA"] } })).rowsAreGroups).toBe(true);
    // Without the date, only a single day's part.
    expect(plan(supplyQuery({ ...byCountry, ...october1, dimensions: ["country"] })).rowsAreGroups).toBe(true);
    expect(plan(supplyQuery({ ...byCountry, start: "2026-09-01T00:00:00", end: "2026-09-02T23:59:59", dimensions: ["country"] })).rowsAreGroups).toBe(false);
    // Hours read from the hourly facts.
    expect(plan(supplyQuery({ ...byCountry, start: "2026-10-01T00:00:00", end: "2026-10-01T05:59:59" })).rowsAreGroups).toBe(false);
    // By an app too, over two publishers: rows read ungrouped, merged by the writer once ordered (the copy DuckDB writes still groups).
    const byApp = supplyQuery({ ...byCountry, ...october1, dimensions: ["date", "country", "app_bundle_id"], scope: { publisher_ids: ["pub-1", "pub-2"] } });
    expect([plan(byApp).rowsAreGroups, plan(byApp).rowsMergedByWriter]).toEqual([false, true]);
    const merged = renderReport(plan(byApp), () => [1, 2]);
    expect(merged.kind === "copy" && [merged.select, merged.columns?.sql]).toEqual([expect.stringMatching(/GROUP BY/), expect.not.stringMatching(/GROUP BY|SUM/)]);
    expect(plan({ ...byApp, dimensions: ["app_bundle_id"], filters: { country: ["USA"] } }).rowsMergedByWriter).toBe(true);
    // Not where the rows are one per group already, nor without an identifier (50 publishers: 50 rows a group), nor over a day written twice.
    expect(plan({ ...byApp, scope: { publisher_ids: ["pub-1"] } }).rowsMergedByWriter).toBe(false);
    expect(plan(supplyQuery({ ...byCountry, ...october1, scope: { publisher_ids: ["pub-1", "pub-2"] } })).rowsMergedByWriter).toBe(false);
    expect(plan({ ...byApp, start: "2026-10-01T00:00:00", end: "2026-10-02T23:59:59" }).rowsMergedByWriter).toBe(false);
    expect(plan({ ...byApp, dimensions: ["date", "app_bundle_id"] }).rowsMergedByWriter).toBe(false);
    // No plan trusts the record while a write is in progress.
    void periods.writing();
    expect(plan(supplyQuery({ ...byCountry, ...october1 })).rowsAreGroups).toBe(false);
    periods.written([]);
    expect(plan().rowsAreGroups).toBe(true);
  });

  it("make a write wait for the statements of plans that trust them, and plans made before a write group after all", async () => {
    const periods = new RollupPeriods();
    periods.set([]);
    const version = periods.current;
    const release = periods.reading(version)!;
    expect(release).toBeTypeOf("function");
    let started = false;
    const write = periods.writing().then(() => (started = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toBe(false);
    // A plan made before the write began no longer reads without grouping.
    expect(periods.reading(version)).toBeUndefined();
    release();
    await write;
    expect(started).toBe(true);
    periods.written([]);
    expect(periods.reading(version)).toBeUndefined();
    expect(periods.reading(periods.current)).toBeTypeOf("function");
  });

  it("are compacted by migration 7 in a database an older adxkit wrote", async () => {
    const db = join(dir, "before-7.duckdb");
    const first = await DuckDBReportStore.open(db, { compactEveryMs: Number.POSITIVE_INFINITY });
    await first.ingest(facts);
    await first.ingest(facts);
    const expected = await first.report(byCountry);
    await first.close();
    // The database as migration 6 left it, after two loads: two rows per key.
    const instance = await DuckDBInstance.create(db);
    const connection = await instance.connect();
    await connection.run("DROP TABLE rollup_periods");
    await connection.run("DELETE FROM schema_migrations WHERE version = 7");
    connection.closeSync();
    instance.closeSync();
    expect(await count(db, "SELECT count(*) FROM supply_daily")).toBe(6);

    const second = await DuckDBReportStore.open(db, { compactEveryMs: Number.POSITIVE_INFINITY });
    expect(second.mixedPeriods()).toEqual([]);
    expect(await second.report(byCountry)).toEqual(expected);
    await second.close();
    const hourly = await openStore({ db, rollups: false });
    expect(await hourly.report(byCountry)).toEqual(expected);
    await hourly.close();
    for (const [table, rows] of [["supply_daily", 3], ["supply_monthly", 3], ["supply_daily_summary", 3], ["supply_monthly_summary", 2], ["supply_daily_apps", 3], ["supply_daily_countries", 3]] as const) {
      expect(await count(db, `SELECT count(*) FROM ${table}`)).toBe(rows);
    }
    expect(await count(db, "SELECT count(*) FROM rollup_periods WHERE loads = 1")).toBe(3);
  });
});
