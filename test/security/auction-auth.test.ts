/**
 * Attack (issue 16, item 2): running auctions as someone else's publisher. Before, any client
 * could run auctions as any app.publisher.id and call the burls it got: requests, impressions and
 * revenue landed in that publisher's supply report, and bidders were charged in theirs. Now every
 * auction carries a supply account's key (Authorization: Bearer), checked before the body is
 * read and through the credential throttle, and its publisher must be one of that account's.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createAuthThrottle } from "../../service/accounts/throttle.js";
import { registerExchange, type ExchangeHandle } from "../../service/auction/index.js";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { answer, bannerRequest, bid, BILLING_KEYS, eventually, memorySink, onLoopback, PUBLIC_URL, startFakeBidder, type FakeBidder } from "../auction/helpers.js";
import { BUILT, freePort, startServerProcess, stopServerProcess, type ServerProcess } from "../helpers/server-process.js";

let store: ReportStore;
let dsp: FakeBidder;
let app: FastifyInstance;
let handle: ExchangeHandle;
let sink: ReturnType<typeof memorySink>;
let now = 0;
/** The attacker's own account (pub-2) and the victim's (pub-1, pub-1-web). */
let attacker: { userid: string; key: string }, victim: { userid: string; key: string };
let demand: { userid: string; authorization: string };
let address = 0;

beforeAll(async () => {
  store = await openStore({ db: ":memory:" });
  const issue = async (publisher_ids: string[]) => {
    const { userid } = await store.createAccount({ side: "supply", publisher_ids });
    return { userid, key: (await store.issueAuctionKey(userid))! };
  };
  victim = await issue(["pub-1", "pub-1-web"]);
  attacker = await issue(["pub-2"]);
  demand = await store.createAccount({ side: "demand", bidder_id: "dsp" });
  dsp = await startFakeBidder();
  sink = memorySink();
  app = Fastify({ logger: false });
  handle = registerExchange(app, {
    bidders: onLoopback([{ id: "dsp", endpoint: dsp.endpoint, seat: "s" }]),
    sink,
    billingKeys: BILLING_KEYS,
    publicUrl: PUBLIC_URL,
    flushMs: 60_000,
    auctionKeys: store,
    auctionKeysOptions: { refreshMs: 50 },
    authThrottle: createAuthThrottle({ now: () => now }),
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await dsp?.close();
  await store?.close();
});
beforeEach(() => {
  dsp.behave((r) => ({ body: answer(r, [bid(2)]) }));
  address++; // each test its own caller address: the throttle of one does not leak into the next
});

/** An auction over the inject API, with `key` as a bearer token (or a raw Authorization header). */
function auction(request: unknown, authorization?: string, remoteAddress = `192.0.2.${address}`) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (authorization !== undefined) headers.authorization = authorization;
  return app.inject({ method: "POST", url: "/openrtb2/auction", headers, payload: typeof request === "string" ? request : JSON.stringify(request), remoteAddress });
}
const bearer = (key: string) => `Bearer ${key}`;
const app1 = (publisher?: string) => ({ app: { bundle: "com.example", ...(publisher === undefined ? {} : { publisher: { id: publisher } }) } });

/** What reached the victim's supply report and the bidder: nothing, for a refused request. */
async function countsFor(publisher: string) {
  await handle.flushFacts();
  return { requests: sink.sum("request", { side: "supply", publisher_id: publisher }), impressions: sink.sum("impression", { side: "supply", publisher_id: publisher }) };
}

describe("who may run an auction", () => {
  test("without a key: 401 auction-key-invalid (WWW-Authenticate: Bearer), before the body is read; nothing counted, no bidder called", async () => {
    const bidderCalls = dsp.requests.length;
    for (const authorization of [undefined, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", `bearer${victim.key}`, `Bearer ${victim.key} extra`, demand.authorization, bearer(demand.authorization), bearer(`${victim.key}x`)]) {
      const res = await auction(bannerRequest(app1("pub-1")), authorization);
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('Bearer realm="adxkit auction"');
      expect(res.json().errors[0].rule).toBe("auction-key-invalid");
    }
    // A body over the auction's limit is refused for its missing key, not for its size: it was never read.
    expect((await auction("x".repeat(2 * 1024 * 1024), undefined, "192.0.2.250")).statusCode).toBe(401);
    expect(dsp.requests.length).toBe(bidderCalls);
    expect(await countsFor("pub-1")).toEqual({ requests: 0, impressions: 0 });
  });

  test("a valid key for another publisher: 403 publisher-not-allowed, the victim's report untouched, no bidder called", async () => {
    const before = await countsFor("pub-1");
    const bidderCalls = dsp.requests.length;
    const cases: [unknown, string][] = [
      [bannerRequest(app1("pub-1")), "/app/publisher/id"],
      [bannerRequest({ app: undefined, site: { page: "https://news.example/", publisher: { id: "pub-1-web" } } }), "/site/publisher/id"],
      [bannerRequest(app1(undefined)), "/app/publisher/id"],
      [bannerRequest({ app: undefined }), "/app/publisher/id"],
    ];
    for (const [request, path] of cases) {
      const res = await auction(request, bearer(attacker.key));
      expect(res.statusCode).toBe(403);
      expect(res.json().errors).toEqual([expect.objectContaining({ path, rule: "publisher-not-allowed" })]);
    }
    expect(dsp.requests.length).toBe(bidderCalls);
    expect(await countsFor("pub-1")).toEqual(before);
    expect(handle.stats().auth.forbidden).toBeGreaterThanOrEqual(cases.length);
  });

  test("the right key runs auctions for each of its publishers, app and site; the billing call needs no key", async () => {
    const before = await countsFor("pub-1");
    const res = await auction(bannerRequest(app1("pub-1")), bearer(victim.key));
    expect(res.statusCode).toBe(200);
    const burl = new URL(res.json().seatbid[0].bid[0].burl);
    expect((await app.inject({ method: "GET", url: burl.pathname + burl.search })).statusCode).toBe(204);
    const web = await auction(bannerRequest({ app: undefined, site: { page: "https://news.example/", publisher: { id: "pub-1-web" } } }), bearer(victim.key));
    expect(web.statusCode).toBe(200);
    expect(await countsFor("pub-1")).toEqual({ requests: before.requests + 1, impressions: before.impressions + 1 });
    expect((await countsFor("pub-1-web")).requests).toBe(1);
  });

  test("a new key works within a second; the key it replaced, and a revoked account's key, stop within the refresh", async () => {
    const { userid } = await store.createAccount({ side: "supply", publisher_ids: ["pub-3"] });
    const run = (key: string, from: string) => async () => (await auction(bannerRequest(app1("pub-3")), bearer(key), from)).statusCode;
    const first = (await store.issueAuctionKey(userid))!;
    await eventually(run(first, "198.51.100.3"), (status) => status === 200, 5000, "the new key");
    const second = (await store.issueAuctionKey(userid))!;
    await eventually(run(second, "198.51.100.4"), (status) => status === 200, 5000, "the replacing key");
    await eventually(async () => (await auction(bannerRequest(app1("pub-3")), bearer(first), "198.51.100.1")).statusCode, (status) => status === 401, 5000, "the replaced key refused");
    await store.revokeAccount(userid);
    await eventually(async () => (await auction(bannerRequest(app1("pub-3")), bearer(second), "198.51.100.2")).statusCode, (status) => status === 401, 5000, "the revoked account's key refused");
  });

  test("20 wrong keys from one address: then 429 with Retry-After, even for the right key, unchecked, until the minute passes; other addresses go on", async () => {
    for (let i = 0; i < 20; i++) expect((await auction(bannerRequest(app1("pub-1")), bearer(`guess-${i}`))).statusCode).toBe(401);
    const throttled = await auction(bannerRequest(app1("pub-1")), bearer(victim.key));
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json().errors[0].rule).toBe("auction-key-throttled");
    expect(Number(throttled.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await auction(bannerRequest(app1("pub-1")), bearer(victim.key), "192.0.2.251")).statusCode).toBe(200);
    now += 60_000;
    expect((await auction(bannerRequest(app1("pub-1")), bearer(victim.key))).statusCode).toBe(200);
  });
});

describe.skipIf(!BUILT)(`adxkit serve${BUILT ? "" : " — SKIPPED: dist/ is not built"}`, () => {
  test("asks for auction keys unless --open-auction, which it says at start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-auth-"));
    const db = join(dir, "adxkit.duckdb");
    const biddersFile = join(dir, "bidders.json");
    writeFileSync(biddersFile, JSON.stringify(onLoopback([{ id: "dsp", endpoint: dsp.endpoint, seat: "s" }])));
    const fileStore = await openStore({ db });
    const { userid } = await fileStore.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    const key = (await fileStore.issueAuctionKey(userid))!;
    await fileStore.close();
    const post = (url: string, authorization?: string) =>
      fetch(`${url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json", ...(authorization && { authorization }) }, body: JSON.stringify(bannerRequest(app1("pub-1"))) });
    let node: ServerProcess | undefined;
    try {
      node = await startServerProcess("serve", ["--db", db, "--bidders", biddersFile, "--no-spool"], await freePort());
      expect(node.stderr.join("")).not.toContain("--open-auction");
      expect((await post(node.url)).status).toBe(401);
      expect((await post(node.url, bearer(key))).status).toBe(200);
      await stopServerProcess(node);
      node = await startServerProcess("serve --open-auction", ["--db", db, "--bidders", biddersFile, "--no-spool", "--open-auction"], await freePort());
      expect(node.stderr.join("")).toContain("--open-auction: anyone may run auctions, for any publisher");
      expect((await post(node.url)).status).toBe(200);
    } finally {
      if (node) await stopServerProcess(node);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
