/**
 * The exchange writing into the real report store (DuckDB in memory): after an auction and its
 * billing call, the supply and demand reports show them after the next flush.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import Fastify from "fastify";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { registerExchange } from "../../service/auction/index.js";
import { answer, bannerRequest, bid, BILLING_KEYS, eventually, startFakeBidder, type FakeBidder } from "./helpers.js";

let store: ReportStore, a: FakeBidder, b: FakeBidder;
const clock = () => Date.UTC(2026, 5, 2, 8, 15);

beforeAll(async () => {
  store = await openStore({ db: ":memory:" });
  [a, b] = await Promise.all([startFakeBidder(), startFakeBidder()]);
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  await store.close();
});

test("an auction and its billing call show in the reports", async () => {
  const app = Fastify({ logger: false });
  const handle = registerExchange(app, {
    bidders: [
      { id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" },
      { id: "dsp-b", endpoint: b.endpoint, seat: "seat-b" },
    ],
    sink: store,
    billingKeys: BILLING_KEYS,
    publicUrl: "http://127.0.0.1",
    openAuction: true,
    clock,
    flushMs: 200,
  });
  try {
    a.behave((r) => ({ body: answer(r, [bid(2)]) }));
    b.behave((r) => ({ body: answer(r, [bid(1.5)]) }));
    const res = await app.inject({ method: "POST", url: "/openrtb2/auction", headers: { "content-type": "application/json" }, payload: bannerRequest() });
    expect(res.statusCode).toBe(200);
    const burl = new URL(res.json().seatbid[0].bid[0].burl);
    expect((await app.inject({ method: "GET", url: burl.pathname + burl.search })).statusCode).toBe(204);

    const window = { start: "2026-06-02T00:00:00", end: "2026-06-02T23:00:00", filters: {}, limit: 100 };
    const supply = () =>
      store.report({ side: "supply", ...window, metrics: ["request", "response", "impression", "revenue"], dimensions: ["placement_id", "platform", "country"], scope: { publisher_ids: ["pub-1"] } });
    // The flush runs every 200 ms: the rows appear after the next one.
    const { rows } = await eventually(supply, (r) => r.rows.length > 0 && r.rows[0].impression === 1, undefined, "supply report rows");
    expect(rows).toEqual([{ placement_id: "placement-1", platform: 2, country: "USA", request: 1, response: 1, impression: 1, revenue: expect.closeTo(0.00151, 9) }]);

    const demand = await store.report({ side: "demand", ...window, metrics: ["request", "response", "impression", "revenue"], dimensions: ["ad_format"], scope: { bidder_id: "dsp-a" } });
    expect(demand.rows).toEqual([{ ad_format: 1, request: 1, response: 1, impression: 1, revenue: expect.closeTo(0.00151, 9) }]);
  } finally {
    await handle.close();
    await app.close();
  }
});
