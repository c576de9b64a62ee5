/**
 * Attacks on the bounds of caller- and bidder-controlled values (issue 16, items 1, 3, 4, 7):
 * over-long report dimensions, many imps, huge bodies, tmax far outside any real budget, and
 * prices no real bid has. Each test is the attack; the bounds come from the spec
 * (x-max-length / report-limits max-id-length, imp maxItems, x-adxkit-body-limit,
 * x-adxkit-auction min-tmax-ms / max-tmax-ms / max-bid-cpm).
 */
import fc from "fast-check";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { auctionRules, reportLimits } from "@adxkit/bindings";
import { encodeAuctionKey } from "@adxkit/bindings/reports";
import { registerExchange, type ExchangeHandle } from "../../service/auction/index.js";
import { sealBillingToken, newTokenId, type BillingClaims } from "../../service/auction/billing-token.js";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { answer, bannerRequest, bid, BILLING_KEYS, PUBLIC_URL, startExchange, startFakeBidder, type FakeBidder, type TestExchange } from "../auction/helpers.js";

const MAX = reportLimits.maxIdLength;
let a: FakeBidder, b: FakeBidder, ex: TestExchange;

beforeAll(async () => {
  [a, b] = await Promise.all([startFakeBidder(), startFakeBidder()]);
  ex = await startExchange([
    { id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" },
    // Its own, lower price cap.
    { id: "dsp-b", endpoint: b.endpoint, seat: "seat-b", max_cpm: 20 },
  ]);
});
afterAll(async () => {
  await ex.close();
  await Promise.all([a.close(), b.close()]);
});
beforeEach(() => {
  for (const fake of [a, b]) fake.behave(() => ({ status: 204 }));
});

describe("report dimensions are bounded where they enter (item 3)", () => {
  const long = (n: number) => "x".repeat(n);
  test.each([
    ["a 600-character tagid", bannerRequest({}, { tagid: long(600) }), "/imp/0/tagid"],
    ["a 513-character app.bundle", bannerRequest({ app: { bundle: long(MAX + 1), publisher: { id: "pub-1" } } }), "/app/bundle"],
    ["a 513-character app.publisher.id", bannerRequest({ app: { bundle: "b", publisher: { id: long(MAX + 1) } } }), "/app/publisher/id"],
    ["a 513-character site.publisher.id", bannerRequest({ app: undefined, site: { publisher: { id: long(MAX + 1) } } }), "/site/publisher/id"],
    ["a 513-character request id", bannerRequest({ id: long(MAX + 1) }), "/id"],
  ])("%s gets 400 (rule length) and no bidder is called", async (_what, request, path) => {
    const before = a.requests.length;
    const res = await ex.auction(request);
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ path, rule: "length" }));
    expect(a.requests.length).toBe(before);
  });

  test("at the limit, counted in characters: 512 astral characters pass, and their billing call counts", async () => {
    const tagid = "😀".repeat(MAX); // 1,024 UTF-16 units: JSON Schema's maxLength and the store both count 512
    a.behave((r) => ({ body: answer(r, [bid(2)]) }));
    const res = await ex.auction(bannerRequest({}, { tagid }));
    expect(res.status).toBe(200);
    const billed = await ex.get(res.body.seatbid[0].bid[0].burl);
    expect(billed.status).toBe(204);
    await ex.handle.flushFacts();
    expect(ex.sink.facts.some((f) => f.side === "supply" && f.placement_id === tagid && f.impression === 1)).toBe(true);
  });
});

describe("a billing call answers 2xx only once its fact is durable and kept by the store's rules (item 3)", () => {
  let store: ReportStore;
  let app: FastifyInstance;
  let handle: ExchangeHandle;
  const clock = () => Date.UTC(2026, 5, 2, 8, 15);

  beforeAll(async () => {
    store = await openStore({ db: ":memory:" });
    app = Fastify({ logger: false });
    handle = registerExchange(app, { bidders: [{ id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" }], sink: store, billingKeys: BILLING_KEYS, publicUrl: PUBLIC_URL, clock, flushMs: 60_000, openAuction: true });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
  });

  // Any string, long or short, astral or not, in the three supply dimensions: each request is
  // refused up front (over the limit) or every billing call it gets is in the store afterwards.
  const dimension = fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }),
    fc.integer({ min: MAX - 2, max: MAX + 2 }).chain((n) => fc.constantFrom("p".repeat(n), "é".repeat(n), "😀".repeat(n))),
  );

  test("property: billed ⇒ in the report store, exactly once; too long ⇒ 400 and no token", async () => {
    a.behave((r) => ({ body: answer(r, [bid(2)]) }));
    const billed = new Map<string, number>();
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(dimension, dimension, fc.string({ unit: "binary", minLength: 1, maxLength: 30 }), async (placement, bundle, publisher) => {
        const request = bannerRequest({ app: { bundle, publisher: { id: publisher } } }, { tagid: placement });
        const res = await app.inject({ method: "POST", url: "/openrtb2/auction", headers: { "content-type": "application/json" }, payload: JSON.stringify(request) });
        const tooLong = [...placement].length > MAX || [...bundle].length > MAX;
        if (tooLong) {
          expect(res.statusCode).toBe(400);
          refused++;
          return;
        }
        expect(res.statusCode).toBe(200);
        const burl = new URL(res.json().seatbid[0].bid[0].burl);
        const call = await app.inject({ method: "GET", url: burl.pathname + burl.search });
        expect(call.statusCode).toBe(204);
        const key = JSON.stringify([publisher, bundle, placement]);
        billed.set(key, (billed.get(key) ?? 0) + 1);
      }),
      { numRuns: 80 },
    );
    await handle.flushFacts();
    expect(handle.stats().facts.factsDropped).toBe(0);
    const publishers = [...new Set([...billed.keys()].map((k) => JSON.parse(k)[0] as string))];
    const { rows } = await store.report({
      side: "supply",
      start: "2026-06-02T00:00:00",
      end: "2026-06-02T23:00:00",
      metrics: ["impression"],
      dimensions: ["publisher_id", "app_bundle_id", "placement_id"],
      filters: {},
      limit: 50_000,
      scope: { publisher_ids: publishers },
    });
    const stored = new Map(rows.map((r) => [JSON.stringify([r.publisher_id, r.app_bundle_id, r.placement_id]), r.impression]));
    expect(stored).toEqual(billed);
    expect(billed.size + refused).toBeGreaterThan(0);
  });

  test("a genuine token whose impression the store would refuse gets 500 billing-fact-refused, and nothing is recorded", async () => {
    const claims: BillingClaims = {
      jti: newTokenId(), aid: "r", iid: "1", seat: "s", px: 1_510_000, cur: "USD",
      k: encodeAuctionKey({ date_hour: "2026-06-02T08:00:00", publisher_id: "pub-1", app_bundle_id: "b", placement_id: "x".repeat(600), ad_format: 1, platform: 2, country: "USA", bidder_id: "dsp-a" }),
      exp: clock() + 60_000,
    };
    const before = handle.stats().billing;
    const call = await app.inject({ method: "GET", url: `/events/billing?token=${sealBillingToken(claims, BILLING_KEYS)}` });
    expect(call.statusCode).toBe(500);
    expect(call.json().errors[0].rule).toBe("billing-fact-refused");
    const after = handle.stats().billing;
    expect(after.refused).toBe(before.refused + 1);
    expect(after.recorded).toBe(before.recorded);
  });
});

describe("many imps and big bodies are refused before they cost anything (item 7)", () => {
  const imps = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(i + 1), banner: { w: 320, h: 50 } }));

  test("101 imps get 400 (rule items) and no bidder is called; 100 still run", async () => {
    const before = a.requests.length;
    const res = await ex.auction(bannerRequest({ imp: imps(101) }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ path: "/imp", rule: "items" }));
    expect(a.requests.length).toBe(before);
    expect((await ex.auction(bannerRequest({ imp: imps(100) }))).status).toBe(204);
    expect(a.requests.length).toBe(before + 1);
  });

  test("a 10,000-imp request (over 256 KiB) gets 413 body-too-large, unparsed", async () => {
    const body = JSON.stringify(bannerRequest({ imp: imps(10_000) }));
    expect(body.length).toBeGreaterThan(262_144);
    const invalidBefore = ex.handle.stats().invalidRequests;
    const res = await ex.auction(body);
    expect(res.status).toBe(413);
    // The handler never ran: the request was not counted, let alone validated.
    expect(ex.handle.stats().invalidRequests).toBe(invalidBefore);
  });
});

describe("tmax is clamped into the spec's range (item 1)", () => {
  /** The tmax the bidder received, and the answer time the caller saw (which holds the time spent before the fan-out). */
  const sentTmax = async (tmax: unknown) => {
    // A stalled, loaded machine may shed a 50 ms auction as too late (204, no bidder called):
    // that says nothing of the clamp, so the auction is asked again (at most 10 times).
    for (let attempt = 1; ; attempt++) {
      const before = a.requests.length;
      const { ms } = await ex.auction(bannerRequest({ tmax }));
      if (a.requests.length > before || attempt === 10) return { sent: a.requests[before]?.tmax as number, ms: Math.ceil(ms) };
    }
  };
  const margin = (tmax: number) => Math.max(auctionRules.exchangeMarginMs, Math.ceil(tmax * auctionRules.exchangeMarginFraction));

  // What a bidder receives is the budget it has: tmax less the margin and the time already spent.
  const budgetOf = (tmax: number, { sent, ms }: { sent: number; ms: number }) => {
    expect(sent).toBeLessThanOrEqual(tmax - margin(tmax));
    expect(sent).toBeGreaterThanOrEqual(Math.max(1, tmax - margin(tmax) - ms));
  };

  test("tmax 100000 gives bidders the budget of max-tmax-ms, not 90 s", async () => {
    budgetOf(auctionRules.maxTmaxMs, await sentTmax(100_000));
  });

  test("tmax 2,386,092,942 (past setTimeout's 2^31 ms) is clamped too, not overflowed into 1 ms", async () => {
    budgetOf(auctionRules.maxTmaxMs, await sentTmax(2_386_092_942));
  });

  test("tmax 1 runs with min-tmax-ms", async () => {
    budgetOf(auctionRules.minTmaxMs, await sentTmax(1));
  });
});

describe("bid prices are bounded (item 4)", () => {
  test("a bid of 1e308 is rejected (price-above-max) and the honest bid wins, first price included", async () => {
    const rejected = () => ex.handle.stats().bidders["dsp-a"].rejections["price-above-max"] ?? 0;
    const before = rejected();
    a.behave((r) => ({ body: answer(r, [bid(1e308)]) }));
    b.behave((r) => ({ body: { id: r.id, seatbid: [{ seat: "seat-b", bid: [bid(2.5)] }] } }));
    for (const at of [1, 2]) {
      const res = await ex.auction(bannerRequest({ at }));
      expect(res.status).toBe(200);
      expect(res.body.seatbid[0].seat).toBe("seat-b");
      expect(res.body.seatbid[0].bid[0].price).toBe(at === 1 ? 2.5 : 0.51);
    }
    expect(rejected()).toBe(before + 2);
  });

  test("the global cap is the spec's max-bid-cpm; a bidder's max_cpm replaces it", async () => {
    a.behave((r) => ({ body: answer(r, [bid(auctionRules.maxBidCpm)]) }));
    expect((await ex.auction(bannerRequest({ at: 1 }))).body.seatbid[0].bid[0].price).toBe(auctionRules.maxBidCpm);
    a.behave((r) => ({ body: answer(r, [bid(auctionRules.maxBidCpm + 0.01)]) }));
    expect((await ex.auction(bannerRequest())).status).toBe(204);
    a.behave(() => ({ status: 204 }));
    b.behave((r) => ({ body: answer(r, [bid(20.01)]) }));
    expect((await ex.auction(bannerRequest())).status).toBe(204);
    expect(ex.handle.stats().bidders["dsp-b"].rejections["price-above-max"]).toBeGreaterThanOrEqual(1);
  });

  test("property: every price answered is finite and every clearing price a safe integer of micro-units", async () => {
    const price = fc.oneof(fc.double({ min: 0, max: 2 * auctionRules.maxBidCpm, noNaN: true }), fc.constantFrom(0, 1e-7, 9_007_199_254.75, 1e15, 1e308, Number.MAX_VALUE));
    await fc.assert(
      fc.asyncProperty(price, price, fc.constantFrom(1, 2), async (pa, pb, at) => {
        a.behave((r) => ({ body: answer(r, [bid(pa)]) }));
        b.behave((r) => ({ body: answer(r, [bid(pb)]) }));
        const res = await ex.auction(bannerRequest({ at }, { bidfloor: 0 }));
        if (res.status !== 200) return;
        const answered = res.body.seatbid[0].bid[0].price;
        expect(Number.isFinite(answered)).toBe(true);
        expect(Number.isSafeInteger(Math.round(answered * 1e6))).toBe(true);
        expect(answered).toBeLessThanOrEqual(auctionRules.maxBidCpm);
      }),
      { numRuns: 60 },
    );
  });
});
