// Accounts: created once with a credential, verified in constant time, revoked, never leaking the credential.
import { createHash } from "node:crypto";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccount, verifyCredentials } from "../../service/store/duckdb/accounts.js";
import { migrate } from "../../service/store/duckdb/migrations.js";
import { openStore, type ReportStore } from "../../service/store/index.js";

let store: ReportStore;
beforeEach(async () => {
  store = await openStore({ db: ":memory:" });
});
afterEach(async () => {
  await store.close();
});

describe("accounts", () => {
  it("creates a supply account whose credential verifies", async () => {
    const { userid, authorization } = await store.createAccount({ side: "supply", publisher_ids: ["pub-1", "pub-2", "pub-1"], legacy: true, placement_dimensions: true });
    expect(userid).toMatch(/^u_[0-9a-f]{12}$/);
    // 32 random bytes, base64url: 43 characters, 256 bits.
    expect(authorization).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const account = await store.verifyCredentials(userid, authorization);
    expect(account).toMatchObject({ userid, side: "supply", publisher_ids: ["pub-1", "pub-2"], legacy: true, placement_dimensions: true, revoked: false });
    expect(account?.bidder_id).toBeUndefined();
    expect(account?.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("creates a demand account", async () => {
    const { userid, authorization } = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    expect(await store.verifyCredentials(userid, authorization)).toMatchObject({ side: "demand", bidder_id: "dsp-1", legacy: false, placement_dimensions: false });
  });

  it("gives every account its own userid and credential", async () => {
    const a = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    const b = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    expect(a.userid).not.toBe(b.userid);
    expect(a.authorization).not.toBe(b.authorization);
    expect(await store.verifyCredentials(a.userid, b.authorization)).toBeNull();
  });

  it("refuses a wrong credential, an unknown userid and odd inputs", async () => {
    const { userid, authorization } = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    expect(await store.verifyCredentials(userid, `${authorization}x`)).toBeNull();
    expect(await store.verifyCredentials(userid, "")).toBeNull();
    expect(await store.verifyCredentials("u_000000000000", authorization)).toBeNull();
    expect(await store.verifyCredentials("", authorization)).toBeNull();
    expect(await store.verifyCredentials("u".repeat(10_000), authorization)).toBeNull();
    expect(await store.verifyCredentials("' OR 1=1 --", authorization)).toBeNull();
  });

  it("lists accounts without any credential or hash", async () => {
    const created = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    await store.createAccount({ side: "demand", bidder_id: "dsp-9" });
    const list = await store.listAccounts();
    expect(list.map((a) => a.side)).toEqual(["supply", "demand"]);
    const text = JSON.stringify(list);
    expect(text).not.toContain(created.authorization);
    expect(text).not.toMatch(/token|hash|authorization/);
    for (const account of list) expect(Object.keys(account).sort()).toEqual(expect.arrayContaining(["userid", "side", "legacy", "placement_dimensions", "created_at", "revoked"]));
  });

  it("revokes: the credential stops working, the account stays listed", async () => {
    const { userid, authorization } = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    expect(await store.revokeAccount(userid)).toBe(true);
    expect(await store.verifyCredentials(userid, authorization)).toBeNull();
    expect(await store.revokeAccount(userid)).toBe(true);
    expect((await store.listAccounts())[0]).toMatchObject({ userid, revoked: true });
    expect(await store.revokeAccount("u_unknown")).toBe(false);
  });

  it("a credential verified (and remembered) before its revocation stops working at once", async () => {
    const { userid, authorization } = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    expect(await store.verifyCredentials(userid, authorization)).toMatchObject({ userid });
    expect(await store.verifyCredentials(userid, authorization)).toMatchObject({ userid });
    expect(await store.verifyCredentials(userid, `${authorization}x`)).toBeNull();
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

describe("auction keys", () => {
  const sha = (key: string) => createHash("sha256").update(key).digest("hex");

  it("a live supply account gets one key at a time, kept as its hash; demand, unknown and revoked accounts get none", async () => {
    const supply = await store.createAccount({ side: "supply", publisher_ids: ["pub-1", "pub-2"] });
    const demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    const first = await store.issueAuctionKey(supply.userid);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const second = await store.issueAuctionKey(supply.userid);
    expect(second).not.toBe(first);
    expect(await store.auctionKeys()).toEqual([{ userid: supply.userid, publisher_ids: ["pub-1", "pub-2"], key_sha256: sha(second!) }]);
    expect(JSON.stringify(await store.listAccounts())).not.toContain(second!);
    expect(await store.issueAuctionKey(demand.userid)).toBeNull();
    expect(await store.issueAuctionKey("u_000000000000")).toBeNull();
    await store.revokeAccount(supply.userid);
    expect(await store.auctionKeys()).toEqual([]);
    expect(await store.issueAuctionKey(supply.userid)).toBeNull();
  });

  it("reads the keys as one JSON text: any publisher id comes back as it was, an unchanged table as the same array", async () => {
    const odd = ['pub "quoted" \\ back', "pub-é-日本", "pub\nline"];
    const a = await store.createAccount({ side: "supply", publisher_ids: odd });
    const b = await store.createAccount({ side: "supply", publisher_ids: ["pub-2"] });
    const keyA = await store.issueAuctionKey(a.userid);
    const keyB = await store.issueAuctionKey(b.userid);
    const first = await store.auctionKeys();
    const expected = [
      { userid: a.userid, publisher_ids: odd, key_sha256: sha(keyA!) },
      { userid: b.userid, publisher_ids: ["pub-2"], key_sha256: sha(keyB!) },
    ].sort((x, y) => (x.userid < y.userid ? -1 : 1));
    expect(first).toEqual(expected);
    // Unchanged: the same array, so the exchange's key table is kept as it is (service/accounts/auction-keys.ts).
    expect(await store.auctionKeys()).toBe(first);
    await store.revokeAccount(b.userid);
    const after = await store.auctionKeys();
    expect(after).not.toBe(first);
    expect(after).toEqual([{ userid: a.userid, publisher_ids: odd, key_sha256: sha(keyA!) }]);
  });

  it("an unknown userid does the same store work as a known one with a wrong credential", async () => {
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    try {
      await migrate(connection);
      const { userid } = await createAccount(connection, { side: "supply", publisher_ids: ["pub-1"] });
      const shape = (value: unknown) => (value instanceof Uint8Array ? `bytes:${value.length}` : typeof value);
      /** The statements a check runs and the shape of every row they read. */
      const work = async (who: string) => {
        const seen: { sql: string; rows: Record<string, string>[] }[] = [];
        const spy = {
          runAndReadAll: async (...args: Parameters<typeof connection.runAndReadAll>) => {
            const reader = await connection.runAndReadAll(...args);
            seen.push({ sql: String(args[0]), rows: reader.getRowObjectsJS().map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, shape(v)]))) });
            return reader;
          },
        };
        expect(await verifyCredentials(spy as unknown as typeof connection, who, "a-wrong-credential")).toBeNull();
        return seen;
      };
      const known = await work(userid);
      expect(known).toHaveLength(1);
      expect(known[0].rows).toHaveLength(1);
      expect(await work("u_000000000000")).toEqual(known);
      expect(await work("u".repeat(100))).toEqual(known);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
