/**
 * The reference bidder (`adxkit bidder`): its answers are valid bid responses with markup of
 * the imp's type, it is deterministic for a seed, and it works end to end with the exchange.
 */
import { XMLParser } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { validateBidResponse, validateNativeResponse } from "@adxkit/bindings";
import { isHtmlMarkup, isVastMarkup } from "../../service/auction/markup.js";
import { startBidder, VAST_TRACKING_EVENTS, type RunningBidder } from "../../service/bidder/index.js";
import { parseRange } from "../../service/cli/commands/bidder.js";
import { bannerRequest, startExchange, waitFor } from "./helpers.js";

const nativeRequest = JSON.stringify({
  ver: "1.2",
  assets: [
    { id: 1, required: 1, title: { len: 10 } },
    { id: 2, img: { type: 3, wmin: 600, hmin: 300 } },
    { id: 3, data: { type: 2, len: 20 } },
    { id: 7, data: { type: 12 } },
  ],
  eventtrackers: [{ event: 1, methods: [1] }],
});

function request(kind: "banner" | "native" | "video", extra: Record<string, unknown> = {}) {
  const imp =
    kind === "banner"
      ? { banner: { w: 300, h: 250 } }
      : kind === "native"
        ? { banner: undefined, native: { request: nativeRequest, ver: "1.2" } }
        : { banner: undefined, video: { mimes: ["video/mp4"], protocols: [2, 3], minduration: 5, maxduration: 30, w: 640, h: 480, companionad: [{ w: 300, h: 250 }] } };
  return bannerRequest(extra, { bidfloor: 0, ...imp });
}

async function post(bidder: RunningBidder, body: unknown) {
  const res = await fetch(bidder.endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (res.status === 200 ? await res.json() : undefined) as any };
}

let bidder: RunningBidder;
beforeAll(async () => {
  bidder = await startBidder({ id: "ref", seat: "seat-ref", price: [1, 2], seed: 42 });
});
afterAll(async () => {
  await bidder.close();
});

describe("answers", () => {
  test("banner: a valid bid response with HTML, nurl/burl with macros, adomain, crid, cat", async () => {
    const req = request("banner");
    const { status, body } = await post(bidder, req);
    expect(status).toBe(200);
    expect(validateBidResponse(body, req).errors).toEqual([]);
    const bid = body.seatbid[0].bid[0];
    expect(body.seatbid[0].seat).toBe("seat-ref");
    expect(isHtmlMarkup(bid.adm)).toBe(true);
    expect(bid.nurl).toMatch(new RegExp(`^${bidder.url}/win\\?.*price=\\$\\{AUCTION_PRICE\\}`));
    expect(bid.burl).toMatch(new RegExp(`^${bidder.url}/bill\\?.*price=\\$\\{AUCTION_PRICE\\}`));
    expect(bid).toMatchObject({ adomain: ["advertiser.example"], crid: expect.any(String), cat: [expect.stringMatching(/^IAB/)], w: 300, h: 250 });
    expect(bid.price).toBeGreaterThanOrEqual(1);
    expect(bid.price).toBeLessThanOrEqual(2);
  });

  test("native: assets answer the request's asset ids; link, imptrackers, eventtrackers", async () => {
    const req = request("native");
    const { body } = await post(bidder, req);
    const native = JSON.parse(body.seatbid[0].bid[0].adm);
    expect(validateNativeResponse(native).errors).toEqual([]);
    expect(native.assets.map((a: { id: number }) => a.id)).toEqual([1, 2, 3, 7]);
    expect(native.assets[0].title.text.length).toBeLessThanOrEqual(10);
    expect(native.assets[1].img).toMatchObject({ w: 600, h: 300 });
    expect(native.link.url).toMatch(/^https:/);
    expect(native.link.clicktrackers).toHaveLength(1);
    expect(native.imptrackers).toHaveLength(1);
    expect(native.eventtrackers[0]).toMatchObject({ event: 1, method: 1 });
  });

  test("native: a Native 1.0 request wrapped as {native: …} gets a wrapped answer", async () => {
    const req = request("native");
    req.imp[0].native.request = JSON.stringify({ native: JSON.parse(nativeRequest) });
    const { body } = await post(bidder, req);
    expect(JSON.parse(body.seatbid[0].bid[0].adm).native.assets).toHaveLength(4);
  });

  test("video: VAST 3.0 with impression, error, the 16 tracking events, clicks, media files, companion", async () => {
    const req = request("video");
    const { body } = await post(bidder, req);
    const adm = body.seatbid[0].bid[0].adm;
    expect(isVastMarkup(adm)).toBe(true);
    const vast = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(adm).VAST;
    expect(vast.version).toBe("3.0");
    const inline = vast.Ad.InLine;
    expect(inline.Impression).toBeTruthy();
    expect(inline.Error).toBeTruthy();
    const [linear, companion] = inline.Creatives.Creative;
    const events = linear.Linear.TrackingEvents.Tracking.map((t: { event: string }) => t.event);
    expect(events).toEqual([...VAST_TRACKING_EVENTS]);
    expect(linear.Linear.Duration).toBe("00:00:15");
    expect(linear.Linear.VideoClicks.ClickThrough).toBeTruthy();
    expect(linear.Linear.VideoClicks.ClickTracking).toBeTruthy();
    expect(linear.Linear.MediaFiles.MediaFile).toMatchObject({ type: "video/mp4", width: "640", height: "480" });
    expect(companion.CompanionAds.Companion).toMatchObject({ width: "300", height: "250" });
  });

  test("respects badv, bcat and the floor by not bidding", async () => {
    expect((await post(bidder, request("banner", { badv: ["advertiser.example"] }))).status).toBe(204);
    expect((await post(bidder, request("banner", { bcat: ["IAB19", "IAB3", "IAB22"] }))).status).toBe(204);
    const floored = request("banner");
    floored.imp[0].bidfloor = 5;
    expect((await post(bidder, floored)).status).toBe(204);
  });

  test("an invalid request is 400", async () => {
    expect((await post(bidder, { id: "x", imp: [] })).status).toBe(400);
  });
});

describe("determinism", () => {
  test("the same seed gives the same bids; fill draws a share of the imps", async () => {
    const run = async (seed: number) => {
      const b = await startBidder({ seed, fill: 0.5, price: [0.5, 5] });
      try {
        const prices: (number | null)[] = [];
        for (let i = 0; i < 20; i++) {
          const res = await post(b, request("banner"));
          prices.push(res.status === 200 ? res.body.seatbid[0].bid[0].price : null);
        }
        return prices;
      } finally {
        await b.close();
      }
    };
    const first = await run(7);
    expect(await run(7)).toEqual(first);
    expect(await run(8)).not.toEqual(first);
    const filled = first.filter((p) => p !== null).length;
    expect(filled).toBeGreaterThan(3);
    expect(filled).toBeLessThan(17);
  });

  test("--price and --latency ranges", () => {
    expect(parseRange("0.5..3", "--price")).toEqual([0.5, 3]);
    expect(parseRange("5", "--latency")).toEqual([5, 5]);
    expect(() => parseRange("3..1", "--price")).toThrow(/MIN must not exceed MAX/);
    expect(() => parseRange("a..b", "--price")).toThrow(/MIN..MAX/);
  });
});

describe("notice routes", () => {
  test("stats keep the last 1000 win notices, oldest first, and count them all", async () => {
    const b = await startBidder({ id: "ring" });
    try {
      // Keep-alive fetches, 1005 in batches: enough to wrap the ring of recent notices.
      for (let start = 0; start < 1005; start += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, 1005 - start) }, async (_, i) => {
            const res = await fetch(`${b.url}/win?bid=none&n=${start + i}`);
            expect(res.status).toBe(204);
          }),
        );
      }
      const stats = b.stats();
      expect(stats.wins).toBe(1005);
      expect(stats.winNotices).toHaveLength(1000);
      const order = stats.winNotices.map((n) => Number(n.n));
      // Within a batch arrival order may differ; across the ring the oldest 5 are gone.
      expect(new Set(order).size).toBe(1000);
      expect(order.filter((n) => n < 50)).toHaveLength(45);
      expect(order.slice(0, 45).every((n) => n < 50)).toBe(true);
      expect(order.slice(-50).every((n) => n >= 955)).toBe(true);
    } finally {
      await b.close();
    }
  });
});

describe("with the exchange", () => {
  test("three reference bidders: auction, win notice and billing notice carry the clearing price", async () => {
    const bidders = await Promise.all([
      startBidder({ id: "r1", seat: "s1", price: [1, 1], seed: 1 }),
      startBidder({ id: "r2", seat: "s2", price: [2, 2], seed: 2 }),
      startBidder({ id: "r3", seat: "s3", price: [3, 3], seed: 3, markupOnWin: true }),
    ]);
    const ex = await startExchange(bidders.map((b, i) => ({ id: `r${i + 1}`, endpoint: b.endpoint, seat: `s${i + 1}` })));
    try {
      for (const kind of ["banner", "native", "video"] as const) {
        const req = request(kind);
        const res = await ex.auction(req);
        expect(res.status).toBe(200);
        const won = res.body.seatbid[0].bid[0];
        expect(res.body.seatbid[0].seat).toBe("s3");
        expect(won.price).toBe(2.01);
        // r3 sends no adm: the exchange fetched it from its nurl and replaced the macros.
        expect(won.adm).toContain("price=2.01");
        expect(won.adm).not.toContain("${AUCTION_");
        expect((await ex.get(won.burl)).status).toBe(204);
      }
      await waitFor(() => bidders[2].stats().bills === 3, undefined, "billing notices");
      const stats = bidders[2].stats();
      expect(stats.wins).toBe(3);
      expect(stats.winNotices.map((n) => n.price)).toEqual(["2.01", "2.01", "2.01"]);
      expect(stats.billNotices.map((n) => n.price)).toEqual(["2.01", "2.01", "2.01"]);
      expect(bidders[0].stats().wins + bidders[1].stats().wins).toBe(0);
    } finally {
      await ex.close();
      await Promise.all(bidders.map((b) => b.close()));
    }
  });
});
