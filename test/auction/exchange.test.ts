/**
 * The auction end to end on loopback: real fake-bidder servers, the exchange listening on
 * 127.0.0.1:0, requests over HTTP. Pricing, floors, blocking rules, markup checks, ties,
 * macros, eligibility and the answer's shape.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { answer, bannerRequest, bid, HTML, NATIVE, NATIVE_REQUEST, startExchange, startFakeBidder, VAST, waitFor, type FakeBidder, type TestExchange } from "./helpers.js";

let a: FakeBidder, b: FakeBidder, v: FakeBidder, ex: TestExchange;

beforeAll(async () => {
  [a, b, v] = await Promise.all([startFakeBidder(), startFakeBidder(), startFakeBidder()]);
  ex = await startExchange([
    { id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" },
    { id: "dsp-b", endpoint: b.endpoint, seat: "seat-b" },
    // Buys video and rewarded video only.
    { id: "dsp-v", endpoint: v.endpoint, seat: "seat-v", formats: [3, 4] },
  ]);
});
afterAll(async () => {
  await ex.close();
  await Promise.all([a.close(), b.close(), v.close()]);
});
beforeEach(() => {
  for (const fake of [a, b, v]) fake.behave(() => ({ status: 204 }));
});

const rejections = (bidder: string) => ex.handle.stats().bidders[bidder].rejections;

describe("pricing", () => {
  test("second price: max(second bid, floor) + 0.01, 1.50 + 0.01 = 1.51 exactly", async () => {
    a.behave((r) => ({ body: answer(r, [bid(2)], { seatbid: [{ seat: "seat-a", bid: [bid(2)] }] }) }));
    b.behave((r) => ({ body: answer(r, [bid(1.5)]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.status).toBe(200);
    expect(res.body.seatbid).toHaveLength(1);
    expect(res.body.seatbid[0].seat).toBe("seat-a");
    expect(res.body.seatbid[0].bid[0].price).toBe(1.51);
  });

  test("first price (at=1) pays the winning bid", async () => {
    a.behave((r) => ({ body: answer(r, [bid(2.37)]) }));
    b.behave((r) => ({ body: answer(r, [bid(1.5)]) }));
    const res = await ex.auction(bannerRequest({ at: 1 }));
    expect(res.body.seatbid[0].bid[0].price).toBe(2.37);
  });

  test("exchange-specific at (501) runs as second price", async () => {
    a.behave((r) => ({ body: answer(r, [bid(3)]) }));
    b.behave((r) => ({ body: answer(r, [bid(1.2)]) }));
    const res = await ex.auction(bannerRequest({ at: 501 }));
    expect(res.body.seatbid[0].bid[0].price).toBe(1.21);
  });

  test("a single bid pays the floor + 0.01", async () => {
    a.behave((r) => ({ body: answer(r, [bid(5)]) }));
    const res = await ex.auction(bannerRequest({}, { bidfloor: 1.5 }));
    expect(res.body.seatbid[0].bid[0].price).toBe(1.51);
  });

  test("the clearing price is never above the winning bid", async () => {
    a.behave((r) => ({ body: answer(r, [bid(1.505)]) }));
    const res = await ex.auction(bannerRequest({}, { bidfloor: 1.5 }));
    expect(res.body.seatbid[0].bid[0].price).toBe(1.505);
  });

  test("a bid below the floor is rejected, the next one wins", async () => {
    const before = rejections("dsp-a")["below-floor"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(0.99)]) }));
    b.behave((r) => ({ body: answer(r, [bid(1.2)]) }));
    const res = await ex.auction(bannerRequest({}, { bidfloor: 1 }));
    expect(res.body.seatbid[0].bid[0].price).toBe(1.01);
    expect(rejections("dsp-a")["below-floor"]).toBe(before + 1);
  });

  test("the second-highest bid may come from the same bidder", async () => {
    a.behave((r) => ({ body: answer(r, [bid(3), bid(2.5)]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.body.seatbid[0].bid).toHaveLength(1);
    expect(res.body.seatbid[0].bid[0].price).toBe(2.51);
  });
});

describe("ties", () => {
  /** Resolves once the exchange has taken `bidder`'s answer number `n`: the other bidder answers after it, on any machine. */
  const answerTaken = (bidder: string, n: number) => waitFor(() => ex.handle.stats().bidders[bidder].answers >= n, undefined, `${bidder}'s answer`);

  test("go to the earliest bid received", async () => {
    const answersOf = (bidder: string) => ex.handle.stats().bidders[bidder].answers;
    let after = answersOf("dsp-a") + 1;
    a.behave((r) => ({ body: answer(r, [bid(2, { crid: "from-a" })]) }));
    b.behave(async (r) => {
      await answerTaken("dsp-a", after);
      return { body: answer(r, [bid(2, { crid: "from-b" })]) };
    });
    const first = await ex.auction(bannerRequest());
    expect(first.body.seatbid[0].bid[0].crid).toBe("from-a");
    expect(first.body.seatbid[0].bid[0].price).toBe(2);

    after = answersOf("dsp-b") + 1;
    a.behave(async (r) => {
      await answerTaken("dsp-b", after);
      return { body: answer(r, [bid(2, { crid: "from-a" })]) };
    });
    b.behave((r) => ({ body: answer(r, [bid(2, { crid: "from-b" })]) }));
    const second = await ex.auction(bannerRequest());
    expect(second.body.seatbid[0].bid[0].crid).toBe("from-b");
  });
});

describe("blocking rules", () => {
  test("badv blocks an advertiser domain and its subdomains", async () => {
    const before = rejections("dsp-a")["advertiser-blocked"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(3, { adomain: ["shop.blocked.example"] }), bid(2.5, { adomain: ["Blocked.Example"] })]) }));
    b.behave((r) => ({ body: answer(r, [bid(1, { adomain: ["fine.example"] })]) }));
    const res = await ex.auction(bannerRequest({ badv: ["blocked.example"] }));
    expect(res.body.seatbid[0].bid[0].adomain).toEqual(["fine.example"]);
    expect(rejections("dsp-a")["advertiser-blocked"]).toBe(before + 2);
  });

  test("bcat blocks a category; a top-level code blocks its subcategories", async () => {
    const before = rejections("dsp-a")["category-blocked"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(3, { cat: ["IAB25-3"] }), bid(2.8, { cat: ["IAB7", "IAB26"] })]) }));
    b.behave((r) => ({ body: answer(r, [bid(1, { cat: ["IAB2-1"] })]) }));
    const res = await ex.auction(bannerRequest({ bcat: ["IAB25", "IAB26"] }));
    expect(res.body.seatbid[0].bid[0].cat).toEqual(["IAB2-1"]);
    expect(rejections("dsp-a")["category-blocked"]).toBe(before + 2);
  });

  test("a subcategory in bcat does not block its top level or siblings", async () => {
    a.behave((r) => ({ body: answer(r, [bid(3, { cat: ["IAB25"] }), bid(2.9, { cat: ["IAB25-2"] })]) }));
    const res = await ex.auction(bannerRequest({ bcat: ["IAB25-3"] }));
    expect(res.body.seatbid[0].bid[0].price).toBe(2.91);
  });

  test("battr of the banner blocks a creative attribute", async () => {
    const before = rejections("dsp-a")["attribute-blocked"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(3, { attr: [6, 1] })]) }));
    b.behave((r) => ({ body: answer(r, [bid(1, { attr: [12] })]) }));
    const res = await ex.auction(bannerRequest({}, { banner: { w: 320, h: 50, battr: [1, 2] } }));
    expect(res.body.seatbid[0].bid[0].attr).toEqual([12]);
    expect(rejections("dsp-a")["attribute-blocked"]).toBe(before + 1);
  });

  test("battr of the video blocks a creative attribute", async () => {
    v.behave((r) => ({ body: answer(r, [bid(3, { adm: VAST, attr: [16] }), bid(2, { adm: VAST })]) }));
    const res = await ex.auction(bannerRequest({}, { banner: undefined, video: { mimes: ["video/mp4"], protocols: [2, 3], battr: [16] } }));
    expect(res.body.seatbid[0].bid[0].price).toBe(0.51);
    expect(rejections("dsp-v")["attribute-blocked"]).toBeGreaterThanOrEqual(1);
  });

  test("currency not allowed by cur", async () => {
    const before = rejections("dsp-a")["currency-not-allowed"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(3)], { cur: "EUR" }) }));
    b.behave((r) => ({ body: answer(r, [bid(1)]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.body.seatbid[0].bid[0].price).toBe(0.51);
    expect(res.body.cur).toBe("USD");
    expect(rejections("dsp-a")["currency-not-allowed"]).toBe(before + 1);
  });

  test("without currency rates a request in EUR alone is not run: its revenue could not be reported in USD (currency-auction.test.ts converts)", async () => {
    a.behave((r) => ({ body: answer(r, [bid(3)], { cur: "EUR" }) }));
    const res = await ex.auction(bannerRequest({ cur: ["EUR"] }));
    expect(res.status).toBe(204);
  });

  test("of the currencies a request allows, the first the exchange can report is the answer's currency", async () => {
    a.behave((r) => ({ body: answer(r, [bid(3)]) }));
    const res = await ex.auction(bannerRequest({ cur: ["EUR", "USD"] }));
    expect(res.body.cur).toBe("USD");
  });
});

describe("markup checks", () => {
  test("banner markup must be HTML", async () => {
    const before = rejections("dsp-a")["markup-mismatch"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(3, { adm: "just text" }), bid(2.9, { adm: VAST })]) }));
    b.behave((r) => ({ body: answer(r, [bid(1)]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.body.seatbid[0].bid[0].adm).toBe(HTML);
    expect(rejections("dsp-a")["markup-mismatch"]).toBe(before + 2);
  });

  test("native markup must be a JSON native response", async () => {
    const before = rejections("dsp-a")["markup-mismatch"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(3, { adm: "{not json" }), bid(2.9, { adm: JSON.stringify({ assets: [] }) }), bid(2, { adm: NATIVE })]) }));
    const res = await ex.auction(bannerRequest({}, { banner: undefined, native: { request: NATIVE_REQUEST, ver: "1.2" } }));
    expect(res.body.seatbid[0].bid[0].adm).toBe(NATIVE);
    expect(rejections("dsp-a")["markup-mismatch"]).toBe(before + 2);
  });

  test("native markup wrapped as {native: …} passes", async () => {
    const wrapped = JSON.stringify({ native: JSON.parse(NATIVE) });
    a.behave((r) => ({ body: answer(r, [bid(2, { adm: wrapped })]) }));
    const res = await ex.auction(bannerRequest({}, { banner: undefined, native: { request: NATIVE_REQUEST } }));
    expect(res.body.seatbid[0].bid[0].adm).toBe(wrapped);
  });

  test("native markup sent as a JSON object: refused in strict mode, served as its JSON text in lenient mode", async () => {
    const native = JSON.parse(NATIVE);
    const request = () => bannerRequest({}, { banner: undefined, native: { request: NATIVE_REQUEST } });
    a.behave((r) => ({ body: answer(r, [bid(3, { adm: native }), bid(2, { adm: NATIVE })]) }));
    const before = rejections("dsp-a")["invalid-response"] ?? 0;
    const strict = await ex.auction(request());
    expect(strict.body.seatbid[0].bid[0].adm).toBe(NATIVE);
    expect(rejections("dsp-a")["invalid-response"]).toBe(before + 1);

    const lenient = await startExchange([{ id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" }], { lenient: true });
    try {
      const res = await lenient.auction(request());
      const won = res.body.seatbid[0].bid[0];
      expect(won.price).toBe(2.01);
      expect(typeof won.adm).toBe("string");
      expect(JSON.parse(won.adm)).toEqual(native);
      // An object that is not a native response, or on an imp without native, is still a markup mismatch.
      a.behave((r) => ({ body: answer(r, [bid(3, { adm: { assets: [] } }), bid(2.5, { adm: native })]) }));
      const mismatch = await lenient.auction(bannerRequest());
      expect(mismatch.status).toBe(204);
      expect(lenient.handle.stats().bidders["dsp-a"].rejections["markup-mismatch"]).toBe(2);
    } finally {
      await lenient.close();
    }
  });

  test("video markup must be a VAST document", async () => {
    const before = rejections("dsp-v")["markup-mismatch"] ?? 0;
    v.behave((r) => ({ body: answer(r, [bid(3, { adm: HTML }), bid(2.9, { adm: "<VAST><Ad>" }), bid(2, { adm: VAST })]) }));
    const res = await ex.auction(bannerRequest({}, { banner: undefined, video: { mimes: ["video/mp4"], protocols: [2, 3] } }));
    expect(res.body.seatbid[0].bid[0].adm).toBe(VAST);
    expect(rejections("dsp-v")["markup-mismatch"]).toBe(before + 2);
  });

  test("a bid with neither adm nor nurl has no markup to serve", async () => {
    const before = rejections("dsp-a")["markup-mismatch"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(3, { adm: undefined })]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.status).toBe(204);
    expect(rejections("dsp-a")["markup-mismatch"]).toBe(before + 1);
  });
});

describe("bid response checks", () => {
  test("a bid on an unknown imp is rejected, the others stay", async () => {
    const before = rejections("dsp-a")["unknown-imp"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(9, { impid: "nope" }), bid(2)]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.body.seatbid[0].bid[0].price).toBe(0.51);
    expect(rejections("dsp-a")["unknown-imp"]).toBe(before + 1);
  });

  test("a repeated bid id is rejected", async () => {
    const before = rejections("dsp-a")["duplicate-bid"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(2, { id: "same" }), bid(3, { id: "same" })]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.body.seatbid[0].bid[0].price).toBe(0.51);
    expect(rejections("dsp-a")["duplicate-bid"]).toBe(before + 1);
  });

  test("a bid failing the schema is rejected as invalid-response", async () => {
    const before = rejections("dsp-a")["invalid-response"] ?? 0;
    a.behave((r) => ({ body: answer(r, [bid(-1), { id: "x", impid: "1" }, bid(2)]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.body.seatbid[0].bid[0].price).toBe(0.51);
    expect(rejections("dsp-a")["invalid-response"]).toBe(before + 2);
  });

  test("a bid response with no seatbid is a no-bid", async () => {
    const before = ex.handle.stats().bidders["dsp-a"].noBids;
    a.behave((r) => ({ body: { id: r.id, nbr: 2 } }));
    const res = await ex.auction(bannerRequest());
    expect(res.status).toBe(204);
    expect(ex.handle.stats().bidders["dsp-a"].noBids).toBe(before + 1);
  });
});

describe("the answer", () => {
  test("one winning bid per imp, grouped by seat; nurl and lurl removed; burl is the exchange's", async () => {
    a.behave((r) => ({
      body: {
        id: r.id,
        bidid: "resp-a",
        seatbid: [
          { seat: "seat-x", bid: [bid(2, { impid: "1", nurl: `${a.url}/win`, lurl: "https://l.example", burl: `${a.url}/bill` })] },
          { bid: [bid(4, { impid: "2" })] },
        ],
      },
    }));
    b.behave((r) => ({ body: { id: r.id, seatbid: [{ seat: "seat-y", bid: [bid(1, { impid: "1" }), bid(3, { impid: "2" })] }] } }));
    const request = bannerRequest({}, {});
    request.imp.push({ id: "2", banner: { w: 300, h: 250 } });
    const res = await ex.auction(request);
    expect(res.status).toBe(200);
    expect(res.contentType).toBe("application/json; charset=utf-8");
    expect(res.body.id).toBe(request.id);
    expect(res.body.cur).toBe("USD");
    const bySeat = Object.fromEntries(res.body.seatbid.map((s: any) => [s.seat, s.bid]));
    // Imp 2's winner has no seat in its answer: it takes the bidder's configured seat.
    expect(Object.keys(bySeat).sort()).toEqual(["seat-a", "seat-x"]);
    expect(bySeat["seat-x"]).toHaveLength(1);
    expect(bySeat["seat-x"][0]).toMatchObject({ impid: "1", price: 1.01 });
    expect(bySeat["seat-a"][0]).toMatchObject({ impid: "2", price: 3.01 });
    for (const won of [bySeat["seat-x"][0], bySeat["seat-a"][0]]) {
      expect(won.nurl).toBeUndefined();
      expect(won.lurl).toBeUndefined();
      expect(won.burl).toMatch(/^http:\/\/exchange\.test\/events\/billing\?token=[\w-]+\.[\w-]+$/);
    }
  });

  test("each winner's markup lands in its own bid, when the seats group the bids in another order than the imps", async () => {
    const adm = (n: number) => `<div title='"${n}"'>imp \${AUCTION_IMP_ID} of \${AUCTION_ID}</div>`;
    a.behave((r) => ({ body: answer(r, [bid(2, { impid: "1", adm: adm(1) }), bid(2, { impid: "3", adm: adm(3) })]) }));
    b.behave((r) => ({ body: { id: r.id, seatbid: [{ seat: "seat-b", bid: [bid(2, { impid: "2", adm: adm(2) })] }] } }));
    const request = bannerRequest();
    request.imp.push({ id: "2", banner: { w: 300, h: 250 } }, { id: "3", banner: { w: 300, h: 250 } });
    const res = await ex.auction(request);
    expect(res.status).toBe(200);
    const won = res.body.seatbid.flatMap((s: any) => s.bid.map((b: any) => [s.seat, b.impid, b.adm]));
    expect(won).toEqual([
      ["seat-a", "1", `<div title='"1"'>imp 1 of ${request.id}</div>`],
      ["seat-a", "3", `<div title='"3"'>imp 3 of ${request.id}</div>`],
      ["seat-b", "2", `<div title='"2"'>imp 2 of ${request.id}</div>`],
    ]);
  });

  test("the winning bid keeps the bidder's fields in its order, price and adm in their places, burl last; a field named __proto__ stays a field", async () => {
    const protoField = JSON.parse('{"__proto__":{"note":1}}');
    a.behave((r) => ({ body: answer(r, [{ ext: { z: 1 }, id: "bid-order", impid: "1", nurl: `${a.url}/win`, price: 2, adm: HTML, lurl: "https://l.example", crid: "cr-1", ...protoField, adomain: ["advertiser.example"] }]) }));
    const res = await ex.auction(bannerRequest());
    const won = res.body.seatbid[0].bid[0];
    expect(Object.keys(won)).toEqual(["ext", "id", "impid", "price", "adm", "crid", "__proto__", "adomain", "burl"]);
    expect(Object.getOwnPropertyDescriptor(won, "__proto__")?.value).toEqual({ note: 1 });
    expect(won).toMatchObject({ ext: { z: 1 }, price: 0.51, adm: HTML });
  });

  test("macros are replaced in adm", async () => {
    const adm = '<img src="https://t.example/i?a=${AUCTION_ID}&b=${AUCTION_BID_ID}&i=${AUCTION_IMP_ID}&s=${AUCTION_SEAT_ID}&ad=${AUCTION_AD_ID}&p=${AUCTION_PRICE}&c=${AUCTION_CURRENCY}&x=${AUCTION_LOSS}">';
    a.behave((r) => ({ body: answer(r, [bid(2, { adm, adid: "ad-7" })], { bidid: "resp-1" }) }));
    b.behave((r) => ({ body: answer(r, [bid(1.5)]) }));
    const request = bannerRequest();
    const res = await ex.auction(request);
    expect(res.body.seatbid[0].bid[0].adm).toBe(
      `<img src="https://t.example/i?a=${request.id}&b=resp-1&i=1&s=seat-a&ad=ad-7&p=1.51&c=USD&x=\${AUCTION_LOSS}">`,
    );
  });

  test("unspecified macro sources become empty strings", async () => {
    a.behave((r) => ({ body: { id: r.id, seatbid: [{ bid: [bid(2, { adm: "<b>${AUCTION_BID_ID}|${AUCTION_AD_ID}|${AUCTION_SEAT_ID}</b>" })] }] } }));
    const res = await ex.auction(bannerRequest());
    // The seat falls back to the configured seat; bidid and adid were not given.
    expect(res.body.seatbid[0].bid[0].adm).toBe("<b>||seat-a</b>");
  });

  test("204 when no imp has a winner", async () => {
    const res = await ex.auction(bannerRequest());
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
  });

  test("an invalid request is 400 with every error", async () => {
    const res = await ex.auction({ id: "x", imp: [{ id: "1" }, { id: "1", banner: {} }] });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.rule).sort()).toEqual(["imp-has-media", "imp-id-unique"]);
    expect(res.body.warnings).toEqual([]);
    expect(a.requests.at(-1)?.id).not.toBe("x");
  });

  test("a body that is not JSON is 400 rule json", async () => {
    const res = await ex.auction("{nope");
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ path: "", rule: "json" });
  });
});

describe("eligibility and tmax", () => {
  test("a bidder gets only the imps of the formats it buys, and none when no imp fits", async () => {
    const before = v.requests.length;
    await ex.auction(bannerRequest());
    expect(v.requests.length).toBe(before);

    const request = bannerRequest();
    request.imp.push({ id: "2", video: { mimes: ["video/mp4"], protocols: [2, 3], ext: { rewarded: 1 } } });
    v.behave((r) => ({ body: answer(r, [bid(2, { impid: "2", adm: VAST })]) }));
    const res = await ex.auction(request);
    expect(v.requests.at(-1).imp.map((imp: any) => imp.id)).toEqual(["2"]);
    expect(a.requests.at(-1).imp.map((imp: any) => imp.id)).toEqual(["1", "2"]);
    expect(res.body.seatbid[0].bid[0]).toMatchObject({ impid: "2", price: 0.01 });
  });

  test("an imp offering only audio is left out: an audio-only request is 204 without a bidder call, a mixed one auctions the rest", async () => {
    const calls = a.requests.length + b.requests.length + v.requests.length;
    const audio = { mimes: ["audio/mp4"], protocols: [9, 10] };
    const res = await ex.auction(bannerRequest({}, { banner: undefined, audio }));
    expect(res.status).toBe(204);
    expect(a.requests.length + b.requests.length + v.requests.length).toBe(calls);

    const mixed = bannerRequest();
    mixed.imp.push({ id: "2", audio });
    a.behave((r) => ({ body: answer(r, [bid(2)]) }));
    const sold = await ex.auction(mixed);
    expect(a.requests.at(-1).imp.map((imp: any) => imp.id)).toEqual(["1"]);
    expect(sold.body.seatbid[0].bid[0]).toMatchObject({ impid: "1" });
  });

  test("bidders get tmax minus the exchange's margin", async () => {
    // Less the time spent before the fan-out, which is part of the answer time the caller saw.
    const withTmax = await ex.auction(bannerRequest({ tmax: 500 }));
    const sent = a.requests.at(-1).tmax;
    expect(sent).toBeLessThanOrEqual(450);
    expect(sent).toBeGreaterThanOrEqual(Math.max(1, 450 - Math.ceil(withTmax.ms)));
    const withDefault = await ex.auction(bannerRequest({ tmax: undefined }));
    expect(a.requests.at(-1).tmax).toBeLessThanOrEqual(180);
    expect(a.requests.at(-1).tmax).toBeGreaterThanOrEqual(Math.max(1, 180 - Math.ceil(withDefault.ms)));
  });

  test("lenient mode lets code values newer than the spec through, with warnings", async () => {
    const lenient = await startExchange([{ id: "dsp-a", endpoint: a.endpoint, seat: "seat-a" }], { lenient: true });
    try {
      a.behave((r) => ({ body: answer(r, [bid(2)]) }));
      const request = bannerRequest({}, { banner: { w: 320, h: 50, battr: [99] } });
      expect((await ex.auction(request)).status).toBe(400);
      expect((await lenient.auction(request)).status).toBe(200);
    } finally {
      await lenient.close();
    }
  });
});
