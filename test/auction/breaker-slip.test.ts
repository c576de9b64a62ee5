/**
 * A timeout the exchange saw late is not the bidder's fault (x-adxkit-auction breaker-slip-ms).
 * Node runs due timers before it reads its sockets, so when the event loop is behind (overload),
 * a bidder's deadline fires with its answer possibly waiting unread. Charged, such timeouts
 * opened every bidder's circuit under overload and the exchange ran its auctions without bids
 * (bench/auction.ts's overload row, 2026-11-26). The loop is held here by a busy wait: the
 * deadline then runs at least as late as the wait, whatever the machine's speed.
 */
import { auctionRules } from "@adxkit/bindings";
import { afterAll, beforeAll, expect, test } from "vitest";
import { bannerRequest, startExchange, startFakeBidder, waitFor, type FakeBidder, type TestExchange } from "./helpers.js";

// tmax 200 gives the bidder at most 180 ms: at least the breaker's floor, so a timeout on time is charged.
const TMAX = 200;
let hanging: FakeBidder, ex: TestExchange;

beforeAll(async () => {
  hanging = await startFakeBidder(() => ({ hang: true }));
  ex = await startExchange([{ id: "hanging", endpoint: hanging.endpoint, seat: "s1" }], { circuitBreaker: { threshold: 2 } });
});
afterAll(async () => {
  await ex.close();
  await hanging.close();
});

/** Holds the event loop for `ms`: every timer due meanwhile runs late by the rest of it. */
function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test("timeouts whose deadline ran late while the loop was held are counted, not charged: the circuit stays closed", async () => {
  expect(TMAX - Math.max(auctionRules.exchangeMarginMs, TMAX * auctionRules.exchangeMarginFraction)).toBeGreaterThanOrEqual(auctionRules.breakerTimeoutFloorMs);
  for (let i = 0; i < 3; i++) {
    const received = hanging.requests.length;
    const auction = ex.auction(bannerRequest({ tmax: TMAX }));
    await waitFor(() => hanging.requests.length > received, undefined, "the bid request at the bidder");
    // The bidder's deadline (≤ 180 ms after the call) now runs ≥ 120 ms late.
    holdLoop(TMAX + 100);
    expect((await auction).status).toBe(204);
  }
  const stats = ex.handle.stats();
  expect(stats.bidders.hanging.faults.timeout).toBe(3);
  expect(stats.bidders.hanging.timeoutsNotCharged).toBe(3);
  expect(stats.circuits.hanging).toMatchObject({ state: "closed", opened: 0, consecutiveFaults: 0 });
});

test("the same bidder's timeouts seen on time are charged: the circuit opens", async () => {
  // Bounded: a shared machine can hold a deadline past breaker-slip-ms now and then (not charged).
  for (let i = 0; i < 10 && ex.handle.stats().circuits.hanging.state === "closed"; i++) await ex.auction(bannerRequest({ tmax: TMAX }));
  expect(ex.handle.stats().circuits.hanging).toMatchObject({ state: "open", opened: 1 });
});
