/**
 * Attacks (issue 16, item 8): reading secrets back out of the server, and counting an impression
 * without the GET. Before: near-miss parameter names (`x-authorization[]`, `token[]`,
 * `x-authorization%00`) were logged with their values; a malformed URL's 400 echoed the whole
 * query string; `HEAD` on a billing URL recorded the impression. Now every query parameter whose
 * decoded name names a secret of the spec (x-adxkit-secret: `token`, `x-authorization`) is
 * logged [Redacted], no error answer echoes a query string, and only the methods the spec
 * declares are routed.
 */
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../service/app.js";
import { registerExchange, type ExchangeHandle } from "../../service/auction/index.js";
import { isSecretParameterName } from "../../service/log.js";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { answer, bannerRequest, bid, BILLING_KEYS, memorySink, onLoopback, PUBLIC_URL, startFakeBidder, type FakeBidder } from "../auction/helpers.js";

/** Parameter names that carry a credential or a token as a server, a proxy or a framework may read them. */
const SECRET_SPELLINGS = [
  "x-authorization",
  "X-Authorization",
  "x-authorization[]",
  "x-authorization%00",
  "x-authorization%5B%5D",
  "x%2Dauthorization",
  "X_AUTHORIZATION",
  "authorization",
  "x-authoriz%ation",
  "token",
  "token[]",
  "%74oken",
  "TOKEN%00",
  "tokens",
  "auth_token",
  "access-token",
  "billing.token",
];
/** Names that name no secret: their values stay readable in the log. */
const PLAIN_NAMES = ["x-userid", "start", "end", "dimensions", "tok", "author", "%E0%A4%A"];

describe("secrets in query strings", () => {
  let store: ReportStore;
  let dsp: FakeBidder;
  let app: FastifyInstance;
  let handle: ExchangeHandle;
  let log = "";

  beforeAll(async () => {
    store = await openStore({ db: ":memory:" });
    dsp = await startFakeBidder((r) => ({ body: answer(r, [bid(2)]) }));
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
        handle = registerExchange(instance, { bidders: onLoopback([{ id: "dsp", endpoint: dsp.endpoint, seat: "s" }]), sink: memorySink(), billingKeys: BILLING_KEYS, publicUrl: PUBLIC_URL, openAuction: true });
      },
    });
  });
  afterAll(async () => {
    await app?.close();
    await dsp?.close();
    await store?.close();
  });

  it(`logs ${SECRET_SPELLINGS.length} spellings of the secret names [Redacted], on a report, a billing URL and an unknown route`, async () => {
    const paths = ["/api/report/demand_report_v2", "/events/billing", "/no/such/route"];
    let n = 0;
    for (const path of paths) {
      for (const name of SECRET_SPELLINGS) {
        const secret = `S3CRET${n++}x`;
        const plain = `plain${n}`;
        await app.inject({ url: `${path}?x-userid=${plain}&${name}=${secret}` });
        expect(log, `${path}?${name}=…`).not.toContain(secret);
        expect(log).toContain(`${name}=[Redacted]`);
        expect(log).toContain(`x-userid=${plain}`);
      }
    }
    expect(n).toBe(paths.length * SECRET_SPELLINGS.length);
  });

  it("names that name no secret keep their values", () => {
    for (const name of SECRET_SPELLINGS) expect(isSecretParameterName(name), name).toBe(true);
    for (const name of PLAIN_NAMES) expect(isSecretParameterName(name), name).toBe(false);
  });

  it("no error answer echoes the query string: a malformed URL (400), an unknown route (404)", async () => {
    const cases = [
      { url: "/api/report/demand_report_v2%ZZ?x-authorization=ECHO1", status: 400 },
      { url: "/events/bil%ling?token=ECHO2", status: 400 },
      { url: "/%?token=ECHO3", status: 400 },
      { url: "/docs/%E0%A4?x-authorization=ECHO4", status: 400 },
      { url: "/no/such/route?token=ECHO5&x-userid=ECHO6", status: 404 },
      { url: "/api/report/nothing?x-authorization=ECHO7", status: 404 },
    ];
    for (const { url, status } of cases) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBe(status);
      expect(response.body).not.toMatch(/ECHO\d/);
      expect(log).not.toMatch(/ECHO[1-57]/);
      // Still the interface's own form: the report envelope under /api/report/, {errors} elsewhere.
      if (url.startsWith("/api/report/")) expect(response.json().status.code).toBe(-2);
      else expect(response.json().errors[0].rule).toBe("http");
    }
  });

  it("HEAD on a billing URL records nothing; the GET then counts it once", async () => {
    const auction = await app.inject({ method: "POST", url: "/openrtb2/auction", payload: bannerRequest() });
    expect(auction.statusCode).toBe(200);
    const burl = new URL(auction.json().seatbid[0].bid[0].burl);
    const before = handle.stats().billing.recorded;
    for (let i = 0; i < 5; i++) expect((await app.inject({ method: "HEAD", url: burl.pathname + burl.search })).statusCode).toBe(404);
    expect(handle.stats().billing.recorded).toBe(before);
    expect((await app.inject({ url: burl.pathname + burl.search })).statusCode).toBe(204);
    expect(handle.stats().billing.recorded).toBe(before + 1);
    // The report GET is not answered to HEAD either (it would run the query and check credentials).
    expect((await app.inject({ method: "HEAD", url: "/api/report/demand_report_v2" })).statusCode).toBe(404);
  });
});
