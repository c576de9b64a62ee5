/**
 * Credentials and tokens (docs/reliability.md, "Security"): never in the server's log — a GET
 * report carries its credential in the query string, a billing URL its token, and Fastify logs
 * every request's URL; the parameters the spec marks x-adxkit-secret are redacted — never stored
 * in the clear, and repeated failures from one address are refused without a check.
 */
import { SealKeyRing, sealKey } from "../../service/auction/token-seal.js";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { DuckDBInstance } from "@duckdb/node-api";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretParameters } from "@adxkit/bindings/fastify";
import { createAuthThrottle } from "../../service/accounts/throttle.js";
import { buildApp } from "../../service/app.js";
import { registerExchange } from "../../service/auction/index.js";
import { startBidder, type RunningBidder } from "../../service/bidder/index.js";
import { redactUrl } from "../../service/log.js";
import { openStore, type ReportStore } from "../../service/store/index.js";

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 19);

describe("secrets never reach the log", () => {
  let store: ReportStore;
  let bidder: RunningBidder;
  let app: FastifyInstance;
  let log = "";
  let demand: { userid: string; authorization: string };
  let supply: { userid: string; authorization: string };

  beforeAll(async () => {
    store = await openStore({ db: ":memory:" });
    demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    supply = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    bidder = await startBidder({ id: "dsp-1", seat: "seat-1", fill: 1 });
    const stream = new Writable({
      write(chunk, _encoding, done) {
        log += chunk.toString();
        done();
      },
    });
    app = await buildApp({
      store,
      logger: { level: "debug", stream },
      extend: (instance) => {
        registerExchange(instance, { bidders: [{ id: "dsp-1", endpoint: bidder.endpoint, seat: "seat-1", allow_private_addresses: true }], sink: store, billingKeys: new SealKeyRing([sealKey("log-test")]), publicUrl: "http://127.0.0.1", openAuction: true });
      },
    });
  });
  afterAll(async () => {
    await app?.close();
    await bidder?.close();
    await store?.close();
  });

  it("redacts every secret the requests carried, and only those", async () => {
    const credential = encodeURIComponent(demand.authorization);
    const window = `start=${day(-1)}&end=${day(1)}`;
    // A GET report with its credential in the query (right, wrong, and with the name percent-encoded).
    expect((await app.inject({ url: `/api/report/demand_report_v2?x-userid=${demand.userid}&x-authorization=${credential}&${window}` })).json().status.code).toBe(0);
    expect((await app.inject({ url: `/api/report/demand_report_v2?x-userid=${demand.userid}&x-authorization=WRONG-${credential}&${window}` })).json().status.code).toBe(-3);
    await app.inject({ url: `/api/report/demand_report_v2?x-userid=${demand.userid}&x%2Dauthorization=${credential}&${window}` });
    // A POST with header credentials.
    await app.inject({ method: "POST", url: "/api/report/v1", headers: { "x-userid": supply.userid, "x-authorization": supply.authorization }, payload: { start: day(-1), end: day(1) } });
    // An auction, its billing call (twice), a forged one, and a token in a URL nothing serves.
    const auction = await app.inject({ method: "POST", url: "/openrtb2/auction", payload: { id: "log-1", imp: [{ id: "1", banner: { w: 320, h: 50 } }], app: { publisher: { id: "pub-1" } } } });
    expect(auction.statusCode).toBe(200);
    const token = new URL(auction.json().seatbid[0].bid[0].burl).searchParams.get("token")!;
    expect((await app.inject({ url: `/events/billing?token=${token}` })).statusCode).toBe(204);
    expect((await app.inject({ url: `/events/billing?token=${token}` })).statusCode).toBe(204);
    expect((await app.inject({ url: `/events/billing?token=${token.slice(0, -4)}AAAA` })).statusCode).toBe(403);
    const missing = await app.inject({ url: `/no/such/route?token=${token}` });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).not.toContain(token);

    for (const secret of [demand.authorization, credential, supply.authorization, token, token.slice(0, 40)]) expect(log).not.toContain(secret);
    expect(log).toContain("x-authorization=[Redacted]");
    expect(log).toContain("x%2Dauthorization=[Redacted]");
    expect(log).toContain("/events/billing?token=[Redacted]");
    // The rest of the URL stays readable.
    expect(log).toContain(`x-userid=${demand.userid}`);
  });

  it("redactUrl: every parameter naming a secret of the spec, whatever its case, encoding or suffix", () => {
    expect(secretParameters.query).toEqual(["token", "x-authorization"]);
    expect(redactUrl("/a?x-authorization=s3cret&start=1")).toBe("/a?x-authorization=[Redacted]&start=1");
    expect(redactUrl("/a?X-Authorization=s&token=t&token=u&tokens=v&tok=w")).toBe("/a?X-Authorization=[Redacted]&token=[Redacted]&token=[Redacted]&tokens=[Redacted]&tok=w");
    expect(redactUrl("/a?%74oken=t&x-authorization")).toBe("/a?%74oken=[Redacted]&x-authorization=[Redacted]");
    expect(redactUrl("/a?%E0%A4%A=x&b=2")).toBe("/a?%E0%A4%A=x&b=2");
    expect(redactUrl("/plain/path")).toBe("/plain/path");
  });
});

describe("credentials at rest and under guessing", () => {
  it("are stored only as SHA-256 hashes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-secrets-"));
    const db = join(dir, "adxkit.duckdb");
    try {
      const store = await openStore({ db });
      const { userid, authorization } = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
      await store.close();
      const instance = await DuckDBInstance.create(db);
      const connection = await instance.connect();
      const rows = (await connection.runAndReadAll("SELECT * FROM accounts")).getRowsJS();
      connection.closeSync();
      instance.closeSync();
      expect(rows).toHaveLength(1);
      expect(JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(authorization);
      const hash = rows[0].find((value) => value instanceof Uint8Array) as Uint8Array;
      expect(Buffer.from(hash).equals(createHash("sha256").update(authorization).digest())).toBe(true);
      expect(rows[0]).toContain(userid);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an address after 20 failed credentials, even with the right ones, until the minute passes; a success resets nothing", async () => {
    const store = await openStore({ db: ":memory:" });
    let now = 0;
    const app = await buildApp({ store, authThrottle: createAuthThrottle({ now: () => now }) });
    try {
      const mine = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
      const other = await store.createAccount({ side: "supply", publisher_ids: ["pub-2"] });
      const report = (who: { userid: string }, authorization: string, remoteAddress: string) =>
        app.inject({ method: "POST", url: "/api/report/v1", remoteAddress, headers: { "x-userid": who.userid, "x-authorization": authorization }, payload: { start: day(-1), end: day(1) } });
      // 19 guesses, a right login, one more guess: the login did not buy another 20.
      for (let i = 0; i < 19; i++) expect((await report(other, `guess-${i}`, "192.0.2.7")).json().status.code).toBe(-3);
      expect((await report(mine, mine.authorization, "192.0.2.7")).json().status.code).toBe(0);
      expect((await report(other, "guess-19", "192.0.2.7")).json().status.code).toBe(-3);
      expect((await report(mine, mine.authorization, "192.0.2.7")).json().status.code).toBe(-3);
      // Another address is not refused; the first one is again once the minute has passed.
      expect((await report(mine, mine.authorization, "192.0.2.8")).json().status.code).toBe(0);
      now = 60_000;
      expect((await report(mine, mine.authorization, "192.0.2.7")).json().status.code).toBe(0);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it("refuses a userid after 20 failed credentials against it, whatever the addresses; an unknown userid is counted alike", async () => {
    const store = await openStore({ db: ":memory:" });
    const app = await buildApp({ store });
    try {
      const account = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
      const report = (userid: string, authorization: string, remoteAddress: string) =>
        app.inject({ method: "POST", url: "/api/report/v1", remoteAddress, headers: { "x-userid": userid, "x-authorization": authorization }, payload: { start: day(-1), end: day(1) } });
      for (let i = 0; i < 20; i++) {
        expect((await report(account.userid, `guess-${i}`, `198.51.100.${i}`)).json().status.code).toBe(-3);
        expect((await report("u_000000000000", `guess-${i}`, `203.0.113.${i}`)).json().status.code).toBe(-3);
      }
      const blocked = await report(account.userid, account.authorization, "198.51.100.200");
      expect(blocked.json().status).toMatchObject({ code: -3, detail: expect.stringContaining("too many failed credentials") });
      expect((await report("u_000000000000", "x", "203.0.113.200")).json().status.detail).toContain("too many failed credentials");
    } finally {
      await app.close();
      await store.close();
    }
  });
});
