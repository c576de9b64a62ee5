/**
 * Bidders that misbehave: the auction still answers by its deadline with the other bidders'
 * bids, and the fault is counted per bidder under its reason. No clock is read: that the answer
 * did not wait for a late bidder shows in the answer (the late bid is the higher one).
 */
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { answer, bannerRequest, bid, GENEROUS_TMAX, SHORT_TMAX, startExchange, startFakeBidder, type FakeBidder, type TestExchange } from "./helpers.js";

let good: FakeBidder, bad: FakeBidder, ex: TestExchange, raw: Server, rawPort: number, closedPort: number;

beforeAll(async () => {
  [good, bad] = await Promise.all([startFakeBidder(), startFakeBidder()]);
  // A TCP server that answers every request with bytes that are not HTTP.
  raw = createServer((socket) => socket.once("data", () => socket.end("GARBAGE\r\n\r\nnot http at all")));
  await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
  rawPort = (raw.address() as { port: number }).port;
  // A port nothing listens on.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  ex = await startExchange([
    { id: "good", endpoint: good.endpoint, seat: "seat-good" },
    { id: "bad", endpoint: bad.endpoint, seat: "seat-bad" },
    { id: "not-http", endpoint: `http://127.0.0.1:${rawPort}/bid`, seat: "s", formats: [3] },
    { id: "refused", endpoint: `http://127.0.0.1:${closedPort}/bid`, seat: "s", formats: [2] },
  ]);
});
afterAll(async () => {
  await ex.close();
  await Promise.all([good.close(), bad.close(), new Promise((resolve) => raw.close(resolve))]);
});
beforeEach(() => {
  good.behave((r) => ({ body: answer(r, [bid(1.2, { crid: "good" })]) }));
});

const faults = (bidder: string) => ex.handle.stats().bidders[bidder].faults;

/**
 * Runs an auction where `bad` misbehaves; the good bidder's bid must win. The budget is generous
 * so that the good bidder answers in time even on a loaded machine (SHORT_TMAX where the bad one
 * never answers in time, and the auction runs to its deadline).
 */
async function auctionWithBadBidder(tmax = GENEROUS_TMAX) {
  const res = await ex.auction(bannerRequest({ tmax }));
  expect(res.status).toBe(200);
  expect(res.body.seatbid[0].bid[0].crid).toBe("good");
  return res;
}

describe("bidder faults are no-bids, never errors to the caller", () => {
  test("a bidder sleeping past tmax: the answer arrives without waiting for it", async () => {
    const before = faults("bad").timeout ?? 0;
    bad.behave((r) => ({ body: answer(r, [bid(9)]), delayMs: 5000 }));
    // The bidder's higher bid comes after 5 s; the auction closed at its deadline with the good one.
    await auctionWithBadBidder(SHORT_TMAX);
    expect(faults("bad").timeout).toBe(before + 1);
  });

  test("a bidder that never answers", async () => {
    const before = faults("bad").timeout ?? 0;
    bad.behave(() => ({ hang: true }));
    await auctionWithBadBidder(SHORT_TMAX);
    expect(faults("bad").timeout).toBe(before + 1);
  });

  test("a bidder whose timeout_ms is shorter than tmax", async () => {
    const capped = await startExchange([
      { id: "good", endpoint: good.endpoint, seat: "g" },
      { id: "slow", endpoint: bad.endpoint, seat: "s", timeout_ms: 30 },
    ]);
    try {
      // Its higher bid would come after 5 s, past even the longest tmax; it was told 30 ms, and
      // its call timed out (the auction did not take its bid).
      bad.behave((r) => ({ body: answer(r, [bid(9)]), delayMs: 5000 }));
      const res = await capped.auction(bannerRequest());
      expect(res.body.seatbid[0].bid[0].crid).toBe("good");
      expect(bad.requests.at(-1).tmax).toBe(30);
      expect(capped.handle.stats().bidders.slow.faults.timeout).toBe(1);
    } finally {
      await capped.close();
    }
  });

  test("a reset connection", async () => {
    const before = faults("bad")["connection-error"] ?? 0;
    bad.behave(() => ({ reset: true }));
    await auctionWithBadBidder();
    expect(faults("bad")["connection-error"]).toBe(before + 1);
  });

  test("a refused connection", async () => {
    const res = await ex.auction(bannerRequest({}, { banner: undefined, native: { request: '{"assets":[{"id":1,"title":{"len":20}}]}' } }));
    expect(res.status).toBe(204);
    expect(faults("refused")["connection-error"]).toBeGreaterThanOrEqual(1);
  });

  test("HTTP 500", async () => {
    const before = faults("bad")["http-error"] ?? 0;
    bad.behave(() => ({ status: 500, body: "oops" }));
    await auctionWithBadBidder();
    expect(faults("bad")["http-error"]).toBe(before + 1);
  });

  test("garbage body", async () => {
    const before = faults("bad")["malformed-response"] ?? 0;
    bad.behave(() => ({ status: 200, body: "<html>definitely not json" }));
    await auctionWithBadBidder();
    bad.behave(() => ({ status: 200, body: "[1, 2, 3]" }));
    await auctionWithBadBidder();
    expect(faults("bad")["malformed-response"]).toBe(before + 2);
  });

  test("a huge body is cut at the cap", async () => {
    const before = faults("bad")["malformed-response"] ?? 0;
    const huge = JSON.stringify({ id: "x", pad: "x".repeat(2 * 1024 * 1024) });
    bad.behave(() => ({ status: 200, body: huge }));
    await auctionWithBadBidder();
    expect(faults("bad")["malformed-response"]).toBe(before + 1);
  });

  test("not HTTP at all", async () => {
    const res = await ex.auction(bannerRequest({}, { banner: undefined, video: { mimes: ["video/mp4"], protocols: [2, 3] } }));
    expect(res.status).toBe(204);
    const notHttp = faults("not-http");
    expect((notHttp["malformed-response"] ?? 0) + (notHttp["connection-error"] ?? 0)).toBeGreaterThanOrEqual(1);
  });

  test("the wrong request id", async () => {
    const before = faults("bad")["wrong-request-id"] ?? 0;
    bad.behave(() => ({ body: { id: "someone-else", seatbid: [{ bid: [bid(9)] }] } }));
    await auctionWithBadBidder();
    expect(faults("bad")["wrong-request-id"]).toBe(before + 1);
  });

  test("every bidder failing at once is a 204, within the deadline", async () => {
    good.behave(() => ({ hang: true }));
    bad.behave(() => ({ reset: true }));
    // Answered at all: neither the hanging bidder nor the reset one is waited for.
    const res = await ex.auction(bannerRequest({ tmax: 100 }));
    expect(res.status).toBe(204);
  });

  test("the pool recovers: after faults, bids flow again", async () => {
    bad.behave((r) => ({ body: answer(r, [bid(2, { crid: "bad-ok" })]) }));
    const res = await ex.auction(bannerRequest());
    expect(res.body.seatbid[0].bid[0].crid).toBe("bad-ok");
  });
});
