// Loads and accounts on ClickHouse, the cases of test/store/ingest.test.ts and accounts.test.ts
// that concern the engine: same keys add up, all-or-nothing (also through a large load's own
// tables), concurrent loads, migrations at open, close; accounts created, verified, listed, revoked.
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FactError, openStore, type Fact } from "../../service/store/index.js";
import { demand, demandQuery, supply, supplyQuery } from "../store/helpers.js";
import { recoveryCases } from "../store/recovery-cases.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason, type TestStore } from "./server.js";

const reason = await skipReason();

/** Runs SQL on the server the tests use, outside any store; returns the rows. */
async function serverRows(query: string): Promise<Record<string, unknown>[]> {
  const { createClient, ClickHouseLogLevel } = await import("@clickhouse/client");
  const client = createClient({ url: CLICKHOUSE_URL, log: { level: ClickHouseLogLevel.OFF } });
  try {
    if (query.startsWith("SELECT")) return (await (await client.query({ query, format: "JSONEachRow" })).json()) as Record<string, unknown>[];
    await client.command({ query });
    return [];
  } finally {
    await client.close();
  }
}

/** The names of the tables of large loads (`load_<id>_…`) in a database. */
const loadTables = async (database: string) =>
  (await serverRows(`SELECT name FROM system.tables WHERE database = '${database}' AND startsWith(name, 'load_') ORDER BY name`)).map((r) => r.name);

describe.skipIf(reason !== undefined)(`ClickHouse store at ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`, () => {
  let store: TestStore;
  beforeEach(async () => {
    // A tiny chunk, so loads of more than three facts per side go through tables of their own.
    store = await openTestStore({ chunkRows: 3 });
  });
  afterEach(async () => {
    await disposeTestStore(store);
  });

  describe("crash-recovery state", () => {
    recoveryCases(() => store);
  });

  describe("ingest", () => {
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

    it("loads large batches through tables of their own, every rollup agreeing with the hourly facts, and leaves none behind", async () => {
      // 48 hours from 30 September: two months, so two partitions of each table move.
      const facts: Fact[] = [];
      for (let h = 0; h < 48; h++) {
        const date_hour = new Date(Date.UTC(2026, 8, 30, h)).toISOString().slice(0, 19);
        facts.push(supply({ date_hour, request: h + 1, country: h % 2 ? "USA" : "DEU" }), demand({ date_hour, request: 2 * h }));
      }
      expect(await store.ingest(facts)).toBe(96);
      expect(await loadTables(store.database)).toEqual([]);
      const september = { start: "2026-09-01T00:00:00", end: "2026-09-30T23:59:59" };
      const whole = await store.report(supplyQuery({ ...september, metrics: ["request"], dimensions: ["date"] }));
      expect(whole.rows).toEqual([{ date: "2026-09-30", request: 300 }]);
      const hourly = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["date_hour"], limit: 50_000 }));
      expect(hourly.total).toBe(24);
      expect(hourly.rows.reduce((sum, r) => sum + (r.request as number), 0)).toBe(876);
      const limited = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["date_hour"], limit: 5 }));
      expect(limited.total).toBe(24);
      expect(limited.rows).toHaveLength(5);
      // Whole months with no hour or app: the monthly rollups answer (summary and full), from the load's own sums.
      expect((await store.report(supplyQuery({ metrics: ["request"], dimensions: ["country"] }))).rows).toEqual([
        { country: "DEU", request: 432 },
        { country: "USA", request: 444 },
      ]);
      expect((await store.report(supplyQuery({ metrics: ["request"], dimensions: ["date", "app_bundle_id"] }))).rows).toEqual([
        { date: "2026-10-01", app_bundle_id: "com.example.a", request: 876 },
      ]);
      expect((await store.report(supplyQuery({ ...september, metrics: ["request"], dimensions: ["placement_id"] }))).rows).toEqual([{ placement_id: "pl-1", request: 300 }]);
      expect((await store.report(demandQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 1704 }]);
    });

    it("copies a large load in, the views summing it, where *_hourly takes no parts (a cluster's Distributed table)", async () => {
      // A Buffer table passing every insert through to a local MergeTree stands in for Distributed
      // (the test server has no cluster); the views stay on the name supply_hourly, as on a shard.
      const db = store.database;
      await serverRows(`CREATE TABLE ${db}.supply_hourly_local AS ${db}.supply_hourly`);
      await serverRows(`DROP TABLE ${db}.supply_hourly`);
      await serverRows(`CREATE TABLE ${db}.supply_hourly AS ${db}.supply_hourly_local ENGINE = Buffer(${db}, supply_hourly_local, 1, 0, 0, 0, 0, 0, 0)`);
      expect(await store.ingest([supply({ request: 1000 })])).toBe(1);
      const facts = Array.from({ length: 10 }, (_, h) => supply({ date_hour: `2026-10-0${1 + (h % 2)}T0${h % 10}:00:00`, request: h + 1 }));
      expect(await store.ingest(facts)).toBe(10);
      expect(await loadTables(db)).toEqual([]);
      expect((await serverRows(`SELECT toUInt32(sum(request)) AS request FROM ${db}.supply_hourly_local`))[0]).toEqual({ request: 1055 });
      expect((await store.report(supplyQuery({ metrics: ["request"], dimensions: ["date"] }))).rows).toEqual([
        { date: "2026-10-01", request: 1025 },
        { date: "2026-10-02", request: 30 },
      ]);
      expect((await store.report(supplyQuery({ metrics: ["request"], dimensions: ["country"] }))).rows).toEqual([{ country: "USA", request: 1055 }]);
    });

    it("drops the tables a load that died a day ago left behind, never those of a load running now", async () => {
      const stale = `load_${(Date.now() - 25 * 3_600_000) * 1000}_supply_hourly`;
      const running = `load_${Date.now() * 1000 - 1}_supply_hourly`;
      for (const name of [stale, running]) await serverRows(`CREATE TABLE ${store.database}.${name} AS ${store.database}.supply_hourly`);
      await store.ingest(Array.from({ length: 8 }, () => supply()));
      expect(await loadTables(store.database)).toEqual([running]);
      expect((await store.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 800 }]);
    });

    it("accepts async iterables and an empty load", async () => {
      async function* facts(): AsyncGenerator<Fact> {
        yield supply();
        yield demand();
      }
      expect(await store.ingest(facts())).toBe(2);
      expect(await store.ingest([])).toBe(0);
    });

    it.each([
      ["early, before anything was staged", 3],
      ["late, after chunks were staged", 9],
    ])("loads nothing when one fact is bad (%s), and names its position", async (_name, position) => {
      const facts: Fact[] = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? supply() : demand()));
      facts[position - 1] = { ...supply(), request: -5 } as Fact;
      const error = await store.ingest(facts).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FactError);
      expect(error).toMatchObject({ line: position });
      expect((await store.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 0 }]);
      expect((await store.report(demandQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 0 }]);
      expect(await loadTables(store.database)).toEqual([]);
    });

    it("refuses an hour ClickHouse DateTime cannot hold (after 2106), loading nothing", async () => {
      const error = await store.ingest([supply(), supply({ date_hour: "2200-01-01T00:00:00" })]).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "ADX_ERR_STORE_FACT_INVALID", line: 2 });
      expect((await store.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 0 }]);
    });

    it("loads nothing when the source fails midway, and stays usable", async () => {
      async function* failing(): AsyncGenerator<Fact> {
        for (let i = 0; i < 8; i++) yield supply({ app_bundle_id: "com.first" });
        throw new Error("disk on fire");
      }
      await expect(store.ingest(failing())).rejects.toThrow("disk on fire");
      expect(await loadTables(store.database)).toEqual([]);
      await store.ingest([supply({ app_bundle_id: "com.second" })]);
      const rows = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["app_bundle_id"] }));
      expect(rows.rows).toEqual([{ app_bundle_id: "com.second", request: 100 }]);
    });

    it("runs concurrent loads one after another", async () => {
      const loads = Array.from({ length: 5 }, (_, i) => store.ingest([supply({ placement_id: `pl-${i}` }), supply({ placement_id: "pl-shared" })]));
      expect(await Promise.all(loads)).toEqual([2, 2, 2, 2, 2]);
      const rows = await store.report(supplyQuery({ metrics: ["request"], dimensions: ["placement_id"] }));
      expect(rows.rows.map((r) => r.placement_id)).toEqual(["pl-0", "pl-1", "pl-2", "pl-3", "pl-4", "pl-shared"]);
      expect(rows.rows.at(-1)).toEqual({ placement_id: "pl-shared", request: 500 });
    });
  });

  describe("database", () => {
    it("migrates once and keeps data across opens", async () => {
      await store.ingest([supply()]);
      const second = await openTestStore({ database: store.database });
      try {
        expect((await second.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 100 }]);
      } finally {
        await second.close();
      }
    });

    it("refuses a database written by a newer schema", async () => {
      const { createClient, ClickHouseLogLevel } = await import("@clickhouse/client");
      const client = createClient({ url: CLICKHOUSE_URL, log: { level: ClickHouseLogLevel.OFF } });
      await client.command({ query: `INSERT INTO ${store.database}.schema_migrations (version, name, applied_at) VALUES (999, 'from the future', now())` });
      await client.close();
      await expect(openTestStore({ database: store.database })).rejects.toMatchObject({ code: "ADX_ERR_STORE_SCHEMA_NEWER" });
    });

    it("opens through openStore({ store: \"clickhouse\" }), the database named by the URL's path", async () => {
      await store.ingest([supply({ request: 7 })]);
      const opened = await openStore({ store: "clickhouse", clickhouseUrl: `${CLICKHOUSE_URL}/${store.database}` });
      try {
        expect((await opened.report(supplyQuery({ metrics: ["request"] }))).rows).toEqual([{ request: 7 }]);
      } finally {
        await opened.close();
      }
    });

    it("fails calls after close", async () => {
      const other = await openTestStore({ database: store.database });
      await other.close();
      await expect(other.report(supplyQuery())).rejects.toMatchObject({ code: "ADX_ERR_STORE_CLOSED" });
    });
  });

  describe("accounts", () => {
    it("creates a supply account whose credential verifies", async () => {
      const { userid, authorization } = await store.createAccount({ side: "supply", publisher_ids: ["pub-1", "pub-2", "pub-1"], legacy: true, placement_dimensions: true });
      expect(userid).toMatch(/^u_[0-9a-f]{12}$/);
      expect(authorization).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const account = await store.verifyCredentials(userid, authorization);
      expect(account).toMatchObject({ userid, side: "supply", publisher_ids: ["pub-1", "pub-2"], legacy: true, placement_dimensions: true, revoked: false });
      expect(account?.bidder_id).toBeUndefined();
      expect(account?.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    });

    it("creates a demand account", async () => {
      const { userid, authorization } = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
      const account = await store.verifyCredentials(userid, authorization);
      expect(account).toMatchObject({ side: "demand", bidder_id: "dsp-1", legacy: false, placement_dimensions: false });
      expect(account?.publisher_ids).toBeUndefined();
    });

    it("refuses a wrong credential, an unknown userid and odd inputs", async () => {
      const { userid, authorization } = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
      expect(await store.verifyCredentials(userid, `${authorization}x`)).toBeNull();
      expect(await store.verifyCredentials(userid, "")).toBeNull();
      expect(await store.verifyCredentials("u_000000000000", authorization)).toBeNull();
      expect(await store.verifyCredentials("", authorization)).toBeNull();
      expect(await store.verifyCredentials("u".repeat(10_000), authorization)).toBeNull();
      expect(await store.verifyCredentials("' OR 1=1 --", authorization)).toBeNull();
      expect(await store.verifyCredentials("\\' OR 1=1 --", authorization)).toBeNull();
    });

    it("lists accounts oldest first, without any credential or hash", async () => {
      const created = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.createAccount({ side: "demand", bidder_id: "dsp-9" });
      const list = await store.listAccounts();
      expect(list.map((a) => a.side)).toEqual(["supply", "demand"]);
      const text = JSON.stringify(list);
      expect(text).not.toContain(created.authorization);
      expect(text).not.toMatch(/token|hash|authorization/);
    });

    it("auction keys: one per live supply account, kept as its hash; none for demand, unknown or revoked accounts", async () => {
      const sha = (key: string) => createHash("sha256").update(key).digest("hex");
      const supply = await store.createAccount({ side: "supply", publisher_ids: ["pub-1", "pub-2"] });
      const demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
      const first = await store.issueAuctionKey(supply.userid);
      await new Promise((resolve) => setTimeout(resolve, 5)); // a newer version
      const second = await store.issueAuctionKey(supply.userid);
      expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(second).not.toBe(first);
      expect(await store.auctionKeys()).toEqual([{ userid: supply.userid, publisher_ids: ["pub-1", "pub-2"], key_sha256: sha(second!) }]);
      expect(await store.issueAuctionKey(demand.userid)).toBeNull();
      expect(await store.issueAuctionKey("u_000000000000")).toBeNull();
      await store.revokeAccount(supply.userid);
      expect(await store.auctionKeys()).toEqual([]);
    });

    it("revokes: the credential stops working, the account stays listed once", async () => {
      const { userid, authorization } = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
      expect(await store.revokeAccount(userid)).toBe(true);
      expect(await store.verifyCredentials(userid, authorization)).toBeNull();
      expect(await store.revokeAccount(userid)).toBe(true);
      const list = await store.listAccounts();
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ userid, revoked: true, bidder_id: "dsp-1" });
      expect(await store.revokeAccount("u_unknown")).toBe(false);
    });

    it("a credential verified (and remembered) before its revocation on this node stops working at once", async () => {
      const { userid, authorization } = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
      expect(await store.verifyCredentials(userid, authorization)).toMatchObject({ userid });
      expect(await store.verifyCredentials(userid, authorization)).toMatchObject({ userid });
      expect(await store.revokeAccount(userid)).toBe(true);
      expect(await store.verifyCredentials(userid, authorization)).toBeNull();
    });

    it.each([
      ["supply without publisher ids", { side: "supply" }],
      ["supply with an empty list", { side: "supply", publisher_ids: [] }],
      ["supply with a bidder id", { side: "supply", publisher_ids: ["pub-1"], bidder_id: "dsp-1" }],
      ["demand without a bidder id", { side: "demand" }],
      ["demand with publisher ids", { side: "demand", bidder_id: "dsp-1", publisher_ids: ["pub-1"] }],
      ["demand with a supply flag", { side: "demand", bidder_id: "dsp-1", legacy: true }],
      ["an unknown side", { side: "both", bidder_id: "dsp-1" }],
    ])("refuses %s", async (_name, account) => {
      await expect(store.createAccount(account as never)).rejects.toMatchObject({ code: "ADX_ERR_STORE_ACCOUNT_INVALID" });
      expect(await store.listAccounts()).toEqual([]);
    });
  });
});
