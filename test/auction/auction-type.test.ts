/**
 * What docs/exchange.md says of `at` (issue 16, item 8: the README once said any other value ran
 * second price while `at: 99` was refused): 1 first price; 2 (the default) and exchange-specific
 * values above 500 second price plus 0.01; any other value refused with 400 `codelist`, or
 * accepted with a warning and run as 2 under --lenient.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answer, bannerRequest, bid, startExchange, startFakeBidder, type FakeBidder, type TestExchange } from "./helpers.js";

describe("auction types", () => {
  let a: FakeBidder, b: FakeBidder;
  let strict: TestExchange, lenient: TestExchange;
  beforeAll(async () => {
    a = await startFakeBidder((r) => ({ body: answer(r, [bid(3)]) }));
    b = await startFakeBidder((r) => ({ body: answer(r, [bid(1)]) }));
    const bidders = [
      { id: "a", endpoint: a.endpoint, seat: "sa" },
      { id: "b", endpoint: b.endpoint, seat: "sb" },
    ];
    strict = await startExchange(bidders);
    lenient = await startExchange(bidders, { lenient: true });
  });
  afterAll(async () => {
    await strict?.close();
    await lenient?.close();
    await a?.close();
    await b?.close();
  });
  const price = (response: { body: any }) => response.body.seatbid[0].bid[0].price;

  it.each([
    ["at 1: first price", 1, 3],
    ["at 2: second price plus 0.01", 2, 1.01],
    ["no at: as 2", undefined, 1.01],
    ["at 501 (exchange-specific): as 2", 501, 1.01],
  ])("%s", async (_name, at, expected) => {
    const response = await strict.auction(bannerRequest(at === undefined ? {} : { at }));
    expect(response.status).toBe(200);
    expect(price(response)).toBe(expected);
  });

  it.each([3, 4, 99, 500])("at %i: 400 codelist; under --lenient run as 2", async (at) => {
    const refused = await strict.auction(bannerRequest({ at }));
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ path: "/at", rule: "codelist" });
    const accepted = await lenient.auction(bannerRequest({ at }));
    expect(accepted.status).toBe(200);
    expect(price(accepted)).toBe(1.01);
  });
});
