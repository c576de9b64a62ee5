/**
 * The burl budget (x-adxkit-auction max-burl-length, issue 21): the exchange's own billing URL,
 * which seals the winning bidder's burl, never exceeds max-burl-length characters. A winning bid
 * whose burl would push it over is dropped before the answer (rejection burl-too-long, counted),
 * and no win notice goes out for it; a bid with an ordinary burl wins as before, within budget.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { auctionRules } from "@adxkit/bindings";
import { bannerRequest, bid, startExchange, startFakeBidder, waitFor, type FakeBidder, type TestExchange } from "./helpers.js";

let fake: FakeBidder, ex: TestExchange;
let burl = "";

beforeAll(async () => {
  fake = await startFakeBidder();
  fake.behave((request) => ({ body: { id: request.id, seatbid: [{ seat: "s1", bid: [bid(2, { burl, nurl: `${fake.url}/win?price=\${AUCTION_PRICE}` })] }] } }));
  ex = await startExchange([{ id: "b1", endpoint: fake.endpoint, seat: "s1" }]);
});
afterAll(async () => {
  await ex.close();
  await fake.close();
});

describe("the exchange's burl stays within max-burl-length", () => {
  test("an ordinary burl: the bid wins, its sealed burl within the budget", async () => {
    burl = `${fake.url}/bill?price=\${AUCTION_PRICE}&id=\${AUCTION_ID}`;
    const { status, body } = await ex.auction(bannerRequest());
    expect(status).toBe(200);
    const won = body.seatbid[0].bid[0];
    expect(won.burl).toMatch(/\/events\/billing\?token=/);
    expect(won.burl.length).toBeLessThanOrEqual(auctionRules.maxBurlLength);
    await waitFor(() => fake.wins.length === 1, undefined, "the winner's win notice");
  });

  test("a burl that would push it over: the bid is dropped and counted, the imp answered without it, no win notice", async () => {
    burl = `${fake.url}/bill?pad=${"x".repeat(auctionRules.maxBurlLength)}&price=\${AUCTION_PRICE}`;
    const { status } = await ex.auction(bannerRequest());
    expect(status).toBe(204);
    expect(ex.handle.stats().bidders.b1.rejections).toEqual({ "burl-too-long": 1 });
    // The notice thread would have it within its batch window: give it that long, then none arrived.
    await new Promise((resolve) => setTimeout(resolve, 3 * auctionRules.noticeBatchMs));
    expect(fake.wins.length).toBe(1);
  });
});
