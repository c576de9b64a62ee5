/**
 * Attack (issue 16, item 5): caller-controlled ids substituted into a bidder's notice URLs and
 * markup. Before, a request id of `x&price=0.000001#` made the bidder's win and billing notices
 * report a price of 0.000001. Each value is now encoded for where it lands (macros.ts).
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { answer, bannerRequest, bid, NATIVE_REQUEST, startExchange, startFakeBidder, waitFor, type FakeBidder, type TestExchange } from "../auction/helpers.js";

const HOSTILE_AUCTION = "x&price=0.000001#";
const HOSTILE_IMP = `1"><script>alert(1)</script>`;
let dsp: FakeBidder, ex: TestExchange;

beforeAll(async () => {
  dsp = await startFakeBidder();
  ex = await startExchange([{ id: "dsp", endpoint: dsp.endpoint, seat: "s" }]);
});
afterAll(async () => {
  await ex.close();
  await dsp.close();
});

test("a hostile request id and imp id arrive at the bidder's win and billing notices as themselves, and the price stays the clearing price", async () => {
  const notice = (path: string) => `${dsp.url}/${path}?auction=\${AUCTION_ID}&imp=\${AUCTION_IMP_ID}&price=\${AUCTION_PRICE}`;
  dsp.behave((r) => ({ body: answer(r, [bid(2, { impid: HOSTILE_IMP, nurl: notice("win"), burl: notice("bill") })]) }));
  const res = await ex.auction(bannerRequest({ id: HOSTILE_AUCTION }, { id: HOSTILE_IMP, bidfloor: 1 }));
  expect(res.status).toBe(200);
  const won = res.body.seatbid[0].bid[0];
  expect(won.price).toBe(1.01);
  await waitFor(() => dsp.wins.length === 1, undefined, "the win notice");
  expect(dsp.wins[0]).toEqual({ auction: HOSTILE_AUCTION, imp: HOSTILE_IMP, price: "1.01" });
  expect((await ex.get(won.burl)).status).toBe(204);
  await waitFor(() => dsp.bills.length === 1, undefined, "the billing notice");
  expect(dsp.bills[0]).toEqual({ auction: HOSTILE_AUCTION, imp: HOSTILE_IMP, price: "1.01" });
});

test("in banner markup a hostile imp id is escaped (no script tag reaches the page) and percent-encoded in the tracker URL", async () => {
  const adm = '<div title="${AUCTION_IMP_ID}"><img src="https://t.example/i?imp=${AUCTION_IMP_ID}&a=${AUCTION_ID}"></div>';
  dsp.behave((r) => ({ body: answer(r, [bid(2, { impid: HOSTILE_IMP, adm })]) }));
  const res = await ex.auction(bannerRequest({ id: HOSTILE_AUCTION }, { id: HOSTILE_IMP }));
  const served: string = res.body.seatbid[0].bid[0].adm;
  expect(served).not.toContain("<script>");
  expect(served).toContain('title="1&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
  const src = /src="([^"]*)"/.exec(served)![1].replace(/&amp;/g, "&");
  expect(Object.fromEntries(new URL(src).searchParams)).toEqual({ imp: HOSTILE_IMP, a: HOSTILE_AUCTION });
});

test("in native markup a hostile id stays inside its JSON string", async () => {
  const adm = JSON.stringify({ ver: "1.2", assets: [{ id: 1, title: { text: "${AUCTION_ID}" } }], link: { url: "https://advertiser.example/?a=${AUCTION_ID}" } });
  const id = `x","assets":[],"y":"\\`;
  dsp.behave((r) => ({ body: answer(r, [bid(2, { adm })]) }));
  const res = await ex.auction(bannerRequest({ id }, { banner: undefined, native: { request: NATIVE_REQUEST, ver: "1.2" } }));
  const served = JSON.parse(res.body.seatbid[0].bid[0].adm);
  expect(served.assets).toHaveLength(1);
  expect(served.assets[0].title.text).toBe(id);
  expect(new URL(served.link.url).searchParams.get("a")).toBe(id);
});
