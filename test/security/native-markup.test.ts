/**
 * Attack (issue 16, item 8): a bidder's native markup that runs script on the device. Before,
 * native `adm` with `javascript:` URLs passed. Now the native response's URLs are `web-url`
 * (http or https: trackers, images, asset sources) or `link-url` (the click link: http(s) or an
 * app's deep link, never a script or local scheme), so such a bid is rejected as markup that does
 * not fit the imp, and the auction goes to a clean bid or to no one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answer, bannerRequest, bid, NATIVE_REQUEST, startExchange, startFakeBidder, type FakeBidder, type TestExchange } from "../auction/helpers.js";

const CLEAN = { ver: "1.2", assets: [{ id: 1, title: { text: "Hello" } }], link: { url: "https://advertiser.example" } };
/** Where a hostile URL can sit in a native response, and one spelling each. */
const HOSTILE: [string, (url: string) => Record<string, unknown>][] = [
  ["link.url", (url) => ({ ...CLEAN, link: { url } })],
  ["link.fallback", (url) => ({ ...CLEAN, link: { url: "https://advertiser.example", fallback: url } })],
  ["link.clicktrackers", (url) => ({ ...CLEAN, link: { url: "https://advertiser.example", clicktrackers: [url] } })],
  ["imptrackers", (url) => ({ ...CLEAN, imptrackers: [url] })],
  ["eventtrackers.url", (url) => ({ ...CLEAN, eventtrackers: [{ event: 1, method: 1, url }] })],
  ["asset img.url", (url) => ({ ...CLEAN, assets: [{ id: 1, img: { url, w: 300, h: 250 } }] })],
  ["privacy", (url) => ({ ...CLEAN, privacy: url })],
];
const SCHEMES = ["javascript:alert(document.cookie)", "JavaScript://%0Aalert(1)", "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)", "file:///etc/passwd"];

describe("native markup URLs", () => {
  let dsp: FakeBidder;
  let ex: TestExchange;
  let markup = JSON.stringify(CLEAN);
  beforeAll(async () => {
    dsp = await startFakeBidder((r) => ({ body: answer(r, [bid(2, { adm: markup })]) }));
    ex = await startExchange([{ id: "dsp", endpoint: dsp.endpoint, seat: "s" }]);
  });
  afterAll(async () => {
    await ex?.close();
    await dsp?.close();
  });
  const nativeAuction = () => ex.auction(bannerRequest({}, { banner: undefined, native: { request: NATIVE_REQUEST, ver: "1.2" } }));

  it(`${HOSTILE.length} places × ${SCHEMES.length} script or local schemes: every bid rejected as markup-mismatch, no markup served`, async () => {
    const before = ex.handle.stats().bidders.dsp?.rejections["markup-mismatch"] ?? 0;
    let tried = 0;
    for (const [place, build] of HOSTILE) {
      for (const url of SCHEMES) {
        markup = JSON.stringify(build(url));
        const response = await nativeAuction();
        expect(response.status, `${place}: ${url}`).toBe(204);
        tried++;
      }
    }
    expect(ex.handle.stats().bidders.dsp.rejections["markup-mismatch"]).toBe(before + tried);
  });

  it("http(s) everywhere, and an app deep link with an https fallback, still win", async () => {
    for (const document of [CLEAN, { ...CLEAN, link: { url: "sailapp://course/42", fallback: "https://advertiser.example/sail" }, imptrackers: ["http://t.example/i"] }]) {
      markup = JSON.stringify(document);
      const response = await nativeAuction();
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body.seatbid[0].bid[0].adm)).toEqual(document);
    }
  });
});
