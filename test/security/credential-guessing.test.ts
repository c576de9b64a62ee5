/**
 * Attacks (issue 16, item 8): guessing credentials. Before, one successful login reset the
 * failed-credential count (1,140 checked guesses in 2.8 s from one address), and a request whose
 * declared body was over 1 MiB checked credentials outside the throttle. Now failures expire only
 * with time, are counted per address and per userid, and every path that checks a credential
 * (report APIs, a refused body, the auction key) goes through one throttle. Each test counts the
 * guesses that reached the store: at most the throttle's 20.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { createAuthThrottle } from "../../service/accounts/throttle.js";
import { buildApp } from "../../service/app.js";
import { startServer, type RunningServer } from "../../service/server.js";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { answer, bannerRequest, bid, onLoopback, startFakeBidder, type FakeBidder } from "../auction/helpers.js";

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 19);
const window = { start: day(-1), end: day(1) };
/** The throttle's default: failed checks per address or userid per minute. */
const ALLOWED_FAILURES = 20;

let store: ReportStore | undefined;
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  await store?.close();
  app = store = undefined;
});

/** A store whose credential checks are counted: `checked` holds the authorization of each. */
async function countingStore(): Promise<{ store: ReportStore; checked: string[] }> {
  const opened = await openStore({ db: ":memory:" });
  const checked: string[] = [];
  const verify = opened.verifyCredentials.bind(opened);
  opened.verifyCredentials = (userid, authorization) => {
    checked.push(authorization);
    return verify(userid, authorization);
  };
  return { store: opened, checked };
}

describe("guessing report credentials", () => {
  it("300 guesses from one address with the attacker's own login after every 10: at most 20 are checked, until the minute passes", async () => {
    let now = 0;
    const counted = await countingStore();
    store = counted.store;
    app = await buildApp({ store, authThrottle: createAuthThrottle({ now: () => now }) });
    const own = await store.createAccount({ side: "supply", publisher_ids: ["pub-2"] });
    const victim = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    const report = (who: { userid: string }, authorization: string) =>
      app!.inject({ method: "POST", url: "/api/report/v1", remoteAddress: "192.0.2.66", headers: { "x-userid": who.userid, "x-authorization": authorization }, payload: window });
    const codes = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      if (i % 10 === 0) await report(own, own.authorization);
      const code = (await report(victim, `guess-${i}`)).json().status.code;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    expect(codes).toEqual(new Map([[-3, 300]]));
    expect(counted.checked.filter((a) => a.startsWith("guess-"))).toHaveLength(ALLOWED_FAILURES);
    // The victim's right credential from that address is refused unchecked too; after the minute, it works.
    expect((await report(victim, victim.authorization)).json().status.detail).toContain("too many failed credentials");
    now += 60_000;
    expect((await report(victim, victim.authorization)).json().status.code).toBe(0);
  });

  it("3 guesses from each of 100 addresses against one userid: at most 20 are checked", async () => {
    const counted = await countingStore();
    store = counted.store;
    app = await buildApp({ store });
    const victim = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    for (let address = 0; address < 100; address++) {
      for (let i = 0; i < 3; i++) {
        const response = await app.inject({ url: "/api/report/demand_report_v2", query: { "x-userid": victim.userid, "x-authorization": `guess-${address}-${i}`, ...window }, remoteAddress: `198.51.100.${address}` });
        expect(response.json().status.code).toBe(-3);
      }
    }
    expect(counted.checked).toHaveLength(ALLOWED_FAILURES);
  });

  it("50 guesses with a 2 MiB body (refused before the route runs) go through the same throttle", async () => {
    const counted = await countingStore();
    store = counted.store;
    app = await buildApp({ store });
    const victim = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    const big = JSON.stringify({ ...window, pad: "x".repeat(2 * 1024 * 1024) });
    for (let i = 0; i < 50; i++) {
      const response = await app.inject({ method: "POST", url: "/api/report/v1", remoteAddress: "192.0.2.77", headers: { "content-type": "application/json", "x-userid": victim.userid, "x-authorization": `guess-${i}` }, payload: big });
      expect(response.json().status.code).toBe(-3);
    }
    expect(counted.checked).toHaveLength(ALLOWED_FAILURES);
    const right = await app.inject({ method: "POST", url: "/api/report/v1", remoteAddress: "192.0.2.77", headers: { "x-userid": victim.userid, "x-authorization": victim.authorization }, payload: window });
    expect(right.json().status.detail).toContain("too many failed credentials");
  });
});

describe("one throttle for report credentials and auction keys (adxkit serve)", () => {
  let server: RunningServer | undefined;
  let dsp: FakeBidder | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await server?.close();
    await dsp?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    server = dsp = dir = undefined;
  });

  it("20 wrong report credentials from an address, then its auctions with a valid key: 429; another address runs them", async () => {
    dir = mkdtempSync(join(tmpdir(), "adxkit-guess-"));
    dsp = await startFakeBidder((r) => ({ body: answer(r, [bid(2)]) }));
    const biddersFile = join(dir, "bidders.json");
    writeFileSync(biddersFile, JSON.stringify(onLoopback([{ id: "dsp", endpoint: dsp.endpoint, seat: "s" }])));
    // The account and its key exist before the server starts: it loads the keys once at start.
    store = await openStore({ db: ":memory:" });
    const { userid } = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    const key = (await store.issueAuctionKey(userid))!;
    server = await startServer({ db: ":memory:", store, port: 0, biddersFile, logLevel: "silent" });
    const auction = (remoteAddress: string) =>
      server!.app.inject({ method: "POST", url: "/openrtb2/auction", remoteAddress, headers: { authorization: `Bearer ${key}` }, payload: bannerRequest({ app: { publisher: { id: "pub-1" } } }) });
    expect((await auction("192.0.2.90")).statusCode).toBe(200);
    for (let i = 0; i < ALLOWED_FAILURES; i++) {
      const response = await server.app.inject({ method: "POST", url: "/api/report/v1", remoteAddress: "192.0.2.91", headers: { "x-userid": userid, "x-authorization": `guess-${i}` }, payload: window });
      expect(response.json().status.code).toBe(-3);
    }
    const refused = await auction("192.0.2.91");
    expect(refused.statusCode).toBe(429);
    expect(refused.json().errors[0].rule).toBe("auction-key-throttled");
    expect((await auction("192.0.2.92")).statusCode).toBe(200);
  });
});
