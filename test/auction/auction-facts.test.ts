/**
 * The facts an auction writes for the reports: supply request/response per imp offered and
 * won, demand request/response per imp sent and validly answered, impression and revenue
 * (clearing / 1000) at billing — exact counts, with the request's dimensions.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { answer, bannerRequest, bid, startExchange, startFakeBidder, VAST, waitFor, type FakeBidder, type TestExchange } from "./helpers.js";

let a: FakeBidder, b: FakeBidder, ex: TestExchange;
const clock = () => Date.UTC(2026, 4, 17, 14, 42, 5);
const HOUR = "2026-05-17T14:00:00";

beforeAll(async () => {
  [a, b] = await Promise.all([startFakeBidder(), startFakeBidder()]);
  ex = await startExchange(
    [
      { id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" },
      { id: "dsp-b", endpoint: b.endpoint, seat: "seat-b", formats: [1] },
    ],
    { clock, flushMs: 100 },
  );
});
afterAll(async () => {
  await ex.close();
  await Promise.all([a.close(), b.close()]);
});

test("facts match the auctions' counts and revenue", async () => {
  // Imp 1 banner (placement-1), imp 2 rewarded video (no tagid), iOS in FRA, app com.example.game, publisher pub-1.
  const request = () => {
    const r = bannerRequest({ device: { os: "iOS", geo: { country: "FRA" } } });
    r.imp.push({ id: "2", video: { mimes: ["video/mp4"], protocols: [2, 3], ext: { rewarded: 1 } } });
    return r;
  };
  // dsp-a bids 2.00 on imp 1 and 3.00 on imp 2 (VAST); dsp-b (banner only) bids 1.50 on imp 1
  // and an invalid bid (below the floor) in the second auction.
  a.behave((r) => ({ body: answer(r, [bid(2, { impid: "1" }), bid(3, { impid: "2", adm: VAST })]) }));
  let call = 0;
  b.behave((r) => ({ body: answer(r, [bid(++call === 2 ? 0.1 : 1.5, { impid: "1" })]) }));

  const wins: any[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await ex.auction(request());
    expect(res.status).toBe(200);
    wins.push(...res.body.seatbid.flatMap((s: any) => s.bid));
  }
  // Prices: imp 1 clears at 1.51 (1.50 second) or 0.51 (floor 0.5, b below floor); imp 2 at 0.01.
  const imp1 = wins.filter((w) => w.impid === "1").map((w) => w.price);
  expect(imp1).toEqual([1.51, 0.51, 1.51]);
  // Bill the first auction's two winners and the third auction's imp 1 (twice: counts once).
  const billed = [wins[0], wins[1], wins[4], wins[4]];
  for (const w of billed) expect((await ex.get(w.burl)).status).toBe(204);

  await waitFor(() => ex.handle.stats().facts.pendingKeys === 0 && ex.sink.facts.length > 0, undefined, "facts flushed");
  await ex.handle.flushFacts();
  const { sink } = ex;
  const supplyBanner = { side: "supply", date_hour: HOUR, publisher_id: "pub-1", app_bundle_id: "com.example.game", placement_id: "placement-1", ad_format: 1, platform: 1, country: "FRA" };
  const supplyVideo = { ...supplyBanner, placement_id: "", ad_format: 4 };
  expect(sink.sum("request", supplyBanner)).toBe(3);
  expect(sink.sum("response", supplyBanner)).toBe(3);
  expect(sink.sum("impression", supplyBanner)).toBe(2);
  expect(sink.sum("revenue", supplyBanner)).toBeCloseTo((1.51 + 1.51) / 1000, 12);
  expect(sink.sum("request", supplyVideo)).toBe(3);
  expect(sink.sum("response", supplyVideo)).toBe(3);
  expect(sink.sum("impression", supplyVideo)).toBe(1);
  expect(sink.sum("revenue", supplyVideo)).toBeCloseTo(0.01 / 1000, 12);

  const demand = (bidder: string, format: number) => ({ side: "demand", date_hour: HOUR, bidder_id: bidder, ad_format: format, platform: 1 });
  expect(sink.sum("request", demand("dsp-a", 1))).toBe(3);
  expect(sink.sum("request", demand("dsp-a", 4))).toBe(3);
  expect(sink.sum("response", demand("dsp-a", 1))).toBe(3);
  expect(sink.sum("response", demand("dsp-a", 4))).toBe(3);
  expect(sink.sum("impression", demand("dsp-a", 1))).toBe(2);
  expect(sink.sum("impression", demand("dsp-a", 4))).toBe(1);
  expect(sink.sum("revenue", demand("dsp-a", 1))).toBeCloseTo(3.02 / 1000, 12);
  // dsp-b buys banner only: it never got imp 2; its below-floor bid is not a response.
  expect(sink.sum("request", demand("dsp-b", 1))).toBe(3);
  expect(sink.sum("request", demand("dsp-b", 4))).toBe(0);
  expect(sink.sum("response", demand("dsp-b", 1))).toBe(2);
  expect(sink.sum("impression", demand("dsp-b", 1))).toBe(0);
  // Every fact is on the auction's hour, and nothing else was written.
  expect(sink.facts.every((f) => f.date_hour === HOUR)).toBe(true);
  expect(sink.sum("request", { side: "supply" })).toBe(6);
});

test("closing the app flushes pending facts and stops the exchange", async () => {
  const other = await startExchange([{ id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" }], { clock, flushMs: 60_000 });
  a.behave((r) => ({ body: answer(r, [bid(2, { impid: "1" })]) }));
  expect((await other.auction(bannerRequest())).status).toBe(200);
  expect(other.sink.facts).toHaveLength(0);
  await other.close(); // app.close(): the exchange closes with it
  expect(other.sink.sum("request", { side: "supply" })).toBe(1);
  expect(other.sink.sum("response", { side: "demand", bidder_id: "dsp-a" })).toBe(1);
  await other.handle.close(); // idempotent
});
