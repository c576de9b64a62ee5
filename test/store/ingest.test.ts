// Loading facts: same keys add up, all-or-nothing, parsing and checking lines, migrations at open.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrations } from "../../service/store/duckdb/migrations.js";
import { FactError, openStore, parseFactLine, type Fact, type ReportStore } from "../../service/store/index.js";
import { demand, demandQuery, supply, supplyQuery } from "./helpers.js";
import { recoveryCases } from "./recovery-cases.js";

const supplyLine =
  '{"side":"supply","date_hour":"2026-10-01T05:00:00","publisher_id":"pub-1","app_bundle_id":"com.example.app","placement_id":"pl-1","ad_format":1,"platform":2,"country":"USA","request":100,"response":80,"impression":60,"revenue":1.23}';
const demandLine = '{"side":"demand","date_hour":"2026-10-01T05:00:00","bidder_id":"dsp-1","ad_format":3,"platform":1,"request":100,"response":50,"impression":20,"revenue":0.9}';

/** supplyLine with one field replaced (undefined removes it). */
function withField(name: string, value: unknown): string {
  const record = JSON.parse(supplyLine);
  if (value === undefined) delete record[name];
  else record[name] = value;
  return JSON.stringify(record);
}

describe("parseFactLine", () => {
  it("reads both sides, keeping only the fields of the side", () => {
    expect(parseFactLine(supplyLine, 1)).toEqual(JSON.parse(supplyLine));
    expect(parseFactLine(demandLine, 2)).toEqual(JSON.parse(demandLine));
    expect(parseFactLine(withField("extra", "ignored"), 3)).toEqual(JSON.parse(supplyLine));
    expect(parseFactLine(withField("publisher_id", ""), 4)).toMatchObject({ publisher_id: "" });
  });

  it.each([
    ["not JSON", "{oops", /not valid JSON/],
    ["not an object", "[1,2]", /not a JSON object/],
    ["an unknown side", withField("side", "both"), /unknown side "both"/],
    ["a missing side", withField("side", undefined), /missing field "side"/],
    ["a missing field", withField("country", undefined), /missing field "country"/],
    ["a count given as text", withField("request", "100"), /"request" must be a non-negative integer/],
    ["a negative count", withField("impression", -1), /"impression" must be a non-negative integer/],
    ["a fractional count", withField("response", 1.5), /"response" must be a non-negative integer/],
    ["a negative revenue", withField("revenue", -0.01), /"revenue" must be a finite number/],
    ["a time off the hour", withField("date_hour", "2026-10-01T05:30:00"), /"date_hour" must be a real UTC hour/],
    ["a day that does not exist", withField("date_hour", "2026-02-30T05:00:00"), /"date_hour"/],
    ["hour 24", withField("date_hour", "2026-10-01T24:00:00"), /"date_hour"/],
    ["a time zone suffix", withField("date_hour", "2026-10-01T05:00:00Z"), /"date_hour"/],
    ["a lower-case country", withField("country", "usa"), /"country" must match \^\[A-Z\]\{3\}\$ or be ""/],
    ["an app bundle given as a number", withField("app_bundle_id", 7), /"app_bundle_id" must be a string/],
    ["a platform given as text", withField("platform", "2"), /"platform" must be a non-negative integer code/],
  ])("rejects %s with its line and reason", (_name, line, reason) => {
    let error: unknown;
    try {
      parseFactLine(line, 42);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FactError);
    expect((error as FactError).line).toBe(42);
    expect((error as FactError).reason).toMatch(reason);
    expect((error as FactError).code).toBe("ADX_ERR_STORE_FACT_INVALID");
  });
});

describe("ingest", () => {
  let store: ReportStore;
  beforeEach(async () => {
    store = await openStore({ db: ":memory:" });
  });
  afterEach(async () => {
    await store.close();
  });

  it("adds up facts of the same key, within a load and across loads", async () => {
    expect(await store.ingest([supply(), supply(), demand()])).toBe(3);
    expect(await store.ingest([supply({ revenue: 0.25 }), demand({ impression: 5 })])).toBe(2);
    const rows = await store.report(supplyQuery({ metrics: ["request", "response", "impression", "revenue"], dimensions: ["date_hour", "country"] }));
    expect(rows.rows).toEqual([{ date_hour: "2026-10-01T05:00:00", country: "USA", request: 300, response: 240, impression: 180, revenue: 3.25 }]);
    const daily = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["date"] }));
    expect(daily.rows).toEqual([{ date: "2026-10-01", request: 300 }]);
    const demandRows = await store.report(demandQuery({ metrics: ["impression"] }));
    expect(demandRows.rows).toEqual([{ impression: 25 }]);
  });

  it("accepts empty app bundle, placement and country (a bid request may leave them out)", () => {
    const fact = parseFactLine(withField("app_bundle_id", "").replace('"placement_id":"pl-1"', '"placement_id":""'), 1);
    expect(fact).toMatchObject({ app_bundle_id: "" });
    expect(parseFactLine(withField("country", ""), 2)).toMatchObject({ country: "" });
  });

  it("accepts async iterables and an empty load", async () => {
    async function* facts(): AsyncGenerator<Fact> {
      yield supply();
      yield demand();
    }
    expect(await store.ingest(facts())).toBe(2);
    expect(await store.ingest([])).toBe(0);
  });

  it("loads nothing when one fact is bad, and names its position", async () => {
    const bad = { ...supply(), request: -5 } as Fact;
    const error = await store.ingest([supply(), demand(), bad, supply()]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FactError);
    expect(error).toMatchObject({ line: 3 });
    expect((await store.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 0 }]);
    expect((await store.report(demandQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 0 }]);
  });

  it("loads nothing when the source fails midway, and stays usable", async () => {
    async function* failing(): AsyncGenerator<Fact> {
      yield supply({ app_bundle_id: "com.first" });
      throw new Error("disk on fire");
    }
    await expect(store.ingest(failing())).rejects.toThrow("disk on fire");
    // The dictionary code given to com.first was rolled back; a new name takes its place cleanly.
    await store.ingest([supply({ app_bundle_id: "com.second" })]);
    const rows = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["app_bundle_id"] }));
    expect(rows.rows).toEqual([{ app_bundle_id: "com.second", request: 100 }]);
  });

  it("keeps counts up to the largest safe integer and hours up to 9999 exact, across data chunks", async () => {
    // 64-bit columns are written as two 32-bit halves (ingest.ts): values past 2^32 need both.
    const big = Number.MAX_SAFE_INTEGER;
    const filler = Array.from({ length: 5000 }, (_, i) => supply({ placement_id: `pl-${i % 7}`, request: 1, response: 0, impression: 0, revenue: 0 }));
    const late = supply({ date_hour: "9999-12-31T23:00:00", request: 2 ** 32 + 7, response: 2 ** 40, impression: 3, revenue: 12.5 });
    expect(await store.ingest([...filler.slice(0, 3000), supply({ request: big - 5000, response: 2 ** 33 }), late, ...filler.slice(3000)])).toBe(5002);
    const october = await store.report(supplyQuery({ metrics: ["request", "response"], dimensions: ["date_hour"] }));
    expect(october.rows).toEqual([{ date_hour: "2026-10-01T05:00:00", request: big, response: 2 ** 33 }]);
    const range = { start: "9999-12-01T00:00:00", end: "9999-12-31T23:59:59" };
    const last = await store.report(supplyQuery({ ...range, metrics: ["request", "response", "impression", "revenue"], dimensions: ["date_hour"] }));
    expect(last.rows).toEqual([{ date_hour: "9999-12-31T23:00:00", request: 2 ** 32 + 7, response: 2 ** 40, impression: 3, revenue: 12.5 }]);
    // The rollups got the same sums (a whole month, no hour: the monthly rollup answers).
    expect((await store.report(supplyQuery({ ...range, metrics: ["request"] }))).rows).toEqual([{ request: 2 ** 32 + 7 }]);
  });

  it("loads a large array (held chunks inserted, the rest appended) all or nothing, with its billing tokens", async () => {
    // 70,000 supply facts: more than the 32 chunks of 2,048 held for the insert (ingest.ts MAX_HELD_CHUNKS).
    const many = Array.from({ length: 70_000 }, (_, i) => supply({ placement_id: `pl-${i % 11}`, request: 1 + (i % 3), response: 0, impression: 0, revenue: 0 }));
    const tokens = Array.from({ length: 5000 }, (_, i) => ({ id: `tok-${i}`, expiresAt: Date.now() + 3_600_000 + i }));
    const bad = { ...supply(), request: -1 } as Fact;
    const error = await store.ingest([...many, bad], { billingTokens: tokens }).catch((e: unknown) => e);
    expect(error).toMatchObject({ line: 70_001 });
    expect((await store.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 0 }]);
    expect((await store.recoveryState("exchange:none", Date.now())).billingTokens).toEqual([]);
    expect(await store.ingest(many, { billingTokens: tokens })).toBe(70_000);
    const requests = many.reduce((sum, fact) => sum + fact.request, 0);
    expect((await store.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: requests }]);
    const byPlacement = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["placement_id"] }));
    expect(byPlacement.rows).toHaveLength(11);
    const counted = (await store.recoveryState("exchange:none", Date.now())).billingTokens;
    expect(counted.sort((a, b) => a.expiresAt - b.expiresAt)).toEqual(tokens);
  });

  it("runs concurrent loads one after another", async () => {
    const loads = Array.from({ length: 5 }, (_, i) => store.ingest([supply({ placement_id: `pl-${i}` }), supply({ placement_id: "pl-shared" })]));
    expect(await Promise.all(loads)).toEqual([2, 2, 2, 2, 2]);
    const rows = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["placement_id"] }));
    expect(rows.rows.map((r) => r.placement_id)).toEqual(["pl-0", "pl-1", "pl-2", "pl-3", "pl-4", "pl-shared"]);
    expect(rows.rows.at(-1)).toEqual({ placement_id: "pl-shared", request: 500 });
  });

  recoveryCases(() => store);
});

describe("database file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "adxkit-store-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("creates its folder, migrates once, and keeps data across opens", async () => {
    const db = join(dir, "nested", "folder", "adxkit.duckdb");
    const first = await openStore({ db });
    await first.ingest([supply()]);
    await first.close();
    const second = await openStore({ db });
    expect((await second.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 100 }]);
    await second.ingest([supply()]);
    expect((await second.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 200 }]);
    await second.close();

    const instance = await DuckDBInstance.create(db);
    const connection = await instance.connect();
    const versions = (await connection.runAndReadAll("SELECT version FROM schema_migrations ORDER BY version")).getRowsJS().map((r) => r[0]);
    expect(versions).toEqual(migrations.map((m) => m.version));
    connection.closeSync();
    instance.closeSync();
  });

  // Each rollup a later migration added, and a report only it answers (report-plan.test.ts).
  const addedRollups = [
    {
      version: 5,
      table: "supply_daily_apps",
      query: supplyQuery({ dimensions: ["date", "app_bundle_id"], metrics: ["request", "impression"] }),
      rows: [
        { date: "2026-10-01", app_bundle_id: "com.example.a", request: 200, impression: 120 },
        { date: "2026-10-02", app_bundle_id: "com.example.b", request: 100, impression: 60 },
      ],
    },
    {
      version: 6,
      table: "supply_daily_countries",
      query: supplyQuery({ dimensions: ["date", "country"], metrics: ["request", "impression"] }),
      rows: [
        { date: "2026-10-01", country: "DEU", request: 100, impression: 60 },
        { date: "2026-10-01", country: "USA", request: 100, impression: 60 },
        { date: "2026-10-02", country: "USA", request: 100, impression: 60 },
      ],
    },
  ];
  it.each(addedRollups)("fills a rollup a later migration adds from the facts already loaded (migration $version, $table)", async ({ version, table, query, rows }) => {
    const db = join(dir, `before-${version}.duckdb`);
    const first = await openStore({ db });
    await first.ingest([supply(), supply({ placement_id: "pl-2", ad_format: 3, country: "DEU" }), supply({ app_bundle_id: "com.example.b", date_hour: "2026-10-02T07:00:00" })]);
    await first.close();
    // The database as the migration before left it: no such rollup yet.
    const instance = await DuckDBInstance.create(db);
    const connection = await instance.connect();
    await connection.run(`DROP TABLE ${table}`);
    await connection.run(`DELETE FROM schema_migrations WHERE version = ${version}`);
    connection.closeSync();
    instance.closeSync();

    const second = await openStore({ db });
    expect((await second.report(query)).rows).toEqual(rows);
    await second.close();
  });

  it("refuses a database written by a newer schema", async () => {
    const db = join(dir, "newer.duckdb");
    await (await openStore({ db })).close();
    const instance = await DuckDBInstance.create(db);
    const connection = await instance.connect();
    await connection.run("INSERT INTO schema_migrations VALUES (999, 'from the future', TIMESTAMP '2030-01-01 00:00:00')");
    connection.closeSync();
    instance.closeSync();
    await expect(openStore({ db })).rejects.toMatchObject({ code: "ADX_ERR_STORE_SCHEMA_NEWER" });
  });

  it("fails calls after close", async () => {
    const store = await openStore({ db: ":memory:" });
    await store.close();
    await expect(store.report(supplyQuery())).rejects.toMatchObject({ code: "ADX_ERR_STORE_CLOSED" });
  });
});
