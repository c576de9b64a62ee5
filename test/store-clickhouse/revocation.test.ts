// A revocation reaches every node sharing one ClickHouse database at that node's next poll of the
// account changes (service/accounts/account-changes.ts, spec x-adxkit-auction revocation): its
// cached report credential and its auction key stop working. The polls are driven by the test
// (called, not waited for); caches that would otherwise outlive them are given no expiry, so
// nothing depends on how fast the machine is.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AuctionKeys } from "../../service/accounts/auction-keys.js";
import { startServer, type RunningServer } from "../../service/server.js";
import { startFakeBidder, type FakeBidder } from "../auction/helpers.js";
import { auctionStatus, reportStatus } from "../helpers/account-requests.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason, type TestStore } from "./server.js";

const reason = await skipReason();
const NEVER = Number.POSITIVE_INFINITY;
const title = (what: string) => `${what} on ClickHouse at ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`;

describe.skipIf(reason !== undefined)(title("revocations across stores"), () => {
  // Two nodes' stores and the CLI's (`adxkit accounts revoke --store clickhouse`), on one database.
  let cli: TestStore;
  let node: TestStore;
  let keys: AuctionKeys;
  beforeEach(async () => {
    cli = await openTestStore();
    node = await openTestStore({ database: cli.database, credentialsTtlMs: NEVER });
    keys = new AuctionKeys(node, { refreshMs: 3_600_000, missRefreshMs: 3_600_000 });
  });
  afterEach(async () => {
    keys.close();
    await node?.close();
    await disposeTestStore(cli);
  });

  /** What the node's timer does every accounts-poll-ms. */
  const poll = async () => {
    const changed = await node.pollAccountChanges!();
    if (changed) await keys.reload();
    return changed;
  };

  it("a credential and an auction key revoked elsewhere work until the node's next poll, then fail", async () => {
    const account = await cli.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    const key = (await cli.issueAuctionKey(account.userid))!;
    expect(await poll()).toBe(true);
    expect(await poll()).toBe(false);
    expect(await node.verifyCredentials(account.userid, account.authorization)).toMatchObject({ userid: account.userid });
    expect(await keys.verify(key)).toMatchObject({ userid: account.userid });

    expect(await cli.revokeAccount(account.userid)).toBe(true);
    // Cached without expiry: only the poll can tell the node.
    expect(await node.verifyCredentials(account.userid, account.authorization)).toMatchObject({ userid: account.userid });
    expect(await keys.verify(key)).toMatchObject({ userid: account.userid });

    expect(await poll()).toBe(true);
    expect(await node.verifyCredentials(account.userid, account.authorization)).toBeNull();
    expect(await keys.verify(key)).toBeUndefined();
    expect(await poll()).toBe(false);
  });

  it("an auction key replaced elsewhere stops working at the next poll, the new one works", async () => {
    const account = await cli.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    const old = (await cli.issueAuctionKey(account.userid))!;
    await poll();
    expect(await keys.verify(old)).toBeDefined();
    const replacement = (await cli.issueAuctionKey(account.userid))!;
    expect(await keys.verify(old)).toBeDefined();
    expect(await poll()).toBe(true);
    expect(await keys.verify(old)).toBeUndefined();
    expect(await keys.verify(replacement)).toMatchObject({ userid: account.userid });
  });

  it("another account's change clears the cache too: the next check asks the database and still answers", async () => {
    const kept = await cli.createAccount({ side: "demand", bidder_id: "dsp-1" });
    await poll();
    expect(await node.verifyCredentials(kept.userid, kept.authorization)).toMatchObject({ userid: kept.userid });
    await cli.createAccount({ side: "demand", bidder_id: "dsp-2" });
    expect(await poll()).toBe(true);
    expect(await node.verifyCredentials(kept.userid, kept.authorization)).toMatchObject({ userid: kept.userid, bidder_id: "dsp-1" });
  });
});

describe.skipIf(reason !== undefined)(title("two adxkit serve nodes (in process, on 127.0.0.1), a revocation made by the CLI"), () => {
  const dir = mkdtempSync(join(tmpdir(), "adxkit-revocation-"));
  let bidder: FakeBidder;
  let cli: TestStore;
  const nodes: { store: TestStore; server: RunningServer }[] = [];
  let account: { userid: string; authorization: string };
  let key: string;

  beforeAll(async () => {
    bidder = await startFakeBidder();
    const biddersFile = join(dir, "bidders.json");
    writeFileSync(biddersFile, JSON.stringify([{ id: "dsp-1", endpoint: bidder.endpoint, seat: "seat-1", allow_private_addresses: true }]));
    cli = await openTestStore();
    account = await cli.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    key = (await cli.issueAuctionKey(account.userid))!;
    for (const name of ["n1", "n2"]) {
      const store = await openTestStore({ database: cli.database, credentialsTtlMs: NEVER });
      const server = await startServer({ db: join(dir, `${name}.duckdb`), store, port: 0, biddersFile, spool: false, logLevel: "silent" });
      nodes.push({ store, server });
    }
  }, 60_000);

  afterAll(async () => {
    for (const { store, server } of nodes) {
      await server.close();
      await store.close();
    }
    await bidder?.close();
    await disposeTestStore(cli);
    rmSync(dir, { recursive: true, force: true });
  });

  const report = (server: RunningServer) => reportStatus(server.url, account.userid, account.authorization);
  const auction = (server: RunningServer) => auctionStatus(server.url, key);

  it("both nodes refuse the revoked credential and auction key once each has polled", { timeout: 60_000 }, async () => {
    for (const { server } of nodes) {
      expect(await report(server)).toBe(0);
      expect(await auction(server)).toBe(204);
    }
    expect(await cli.revokeAccount(account.userid)).toBe(true);
    for (const { server } of nodes) {
      // (Not asserted before the poll: the auction keys' backstop reload may run first on a slow machine.)
      await server.pollAccountChanges();
      expect(await report(server)).toBe(-3);
      expect(await auction(server)).toBe(401);
    }
  });
});
