/**
 * Attack (issue 16, item 1): switching bidders off through their circuit breaker. The time a
 * bidder gets comes from the caller's tmax; before, twelve auctions with tmax 1 opened the breaker
 * of every healthy bidder and fill dropped to 0. A timeout now counts only when the bidder had at
 * least its timeout_ms, else breaker-timeout-floor-ms (x-adxkit-auction).
 *
 * The fake bidder is deterministic: it never answers a request whose tmax is below what it needs
 * (it is a bidder on a real network), and answers any other at once with a bid.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { auctionRules } from "@adxkit/bindings";
import { CircuitBreaker } from "../../service/auction/circuit-breaker.js";
import { answer, bannerRequest, bid, startExchange, startFakeBidder, type FakeBidder, type TestExchange } from "../auction/helpers.js";

const FLOOD = 50;
const REAL = 20;
const needs = auctionRules.breakerTimeoutFloorMs;
let healthy: FakeBidder, patient: FakeBidder, ex: TestExchange;

beforeAll(async () => {
  [healthy, patient] = await Promise.all([startFakeBidder(), startFakeBidder()]);
  for (const fake of [healthy, patient]) fake.behave((r) => (r.tmax < needs ? { hang: true } : { body: answer(r, [bid(2)]) }));
  ex = await startExchange(
    [
      { id: "healthy", endpoint: healthy.endpoint, seat: "s1" },
      // Says it needs 300 ms: a call with less says nothing about it.
      { id: "patient", endpoint: patient.endpoint, seat: "s2", timeout_ms: 300 },
    ],
    { circuitBreaker: {} },
  );
});
afterAll(async () => {
  await ex.close();
  await Promise.all([healthy.close(), patient.close()]);
});

describe("a tmax:1 flood cannot open a healthy bidder's circuit", () => {
  test(`${FLOOD} auctions with tmax 1, then real traffic: the circuits stay closed and every real auction fills`, async () => {
    for (let i = 0; i < FLOOD; i++) expect((await ex.auction(bannerRequest({ tmax: 1 }))).status).toBe(204);
    const stats = ex.handle.stats();
    for (const id of ["healthy", "patient"]) {
      expect(stats.circuits[id]).toMatchObject({ state: "closed", opened: 0, skipped: 0 });
      // On a busy machine an auction may run out of time before a call goes out: not every
      // flood auction reaches the bidder, but every timeout that happened went uncharged.
      expect(stats.bidders[id].faults.timeout).toBeGreaterThan(0);
      expect(stats.bidders[id].faults.timeout).toBeLessThanOrEqual(FLOOD);
      expect(stats.bidders[id].timeoutsNotCharged).toBe(stats.bidders[id].faults.timeout);
    }
    let filled = 0;
    // tmax 3000: far more than either bidder needs, whatever the machine is doing.
    for (let i = 0; i < REAL; i++) if ((await ex.auction(bannerRequest({ tmax: 3000 }))).status === 200) filled++;
    expect(filled).toBe(REAL);
  });

  test("the breaker still protects: the same bidder hanging with its full time opens the circuit", async () => {
    healthy.behave(() => ({ hang: true }));
    try {
      // tmax 500 gives it ~485 ms less the event loop's lag, far above the floor even on a busy
      // machine (tmax 150 left too little once a slow turn's lag came off it): a real timeout, charged.
      // Up to 30: a timeout whose deadline a busy machine ran past breaker-slip-ms late is not charged.
      for (let i = 0; i < 30 && ex.handle.stats().circuits.healthy.state === "closed"; i++) await ex.auction(bannerRequest({ tmax: 500 }));
      expect(ex.handle.stats().circuits.healthy).toMatchObject({ state: "open", opened: 1 });
    } finally {
      healthy.behave((r) => (r.tmax < needs ? { hang: true } : { body: answer(r, [bid(2)]) }));
    }
  });
});

test("an inconclusive call leaves the count alone and hands the probe to the next call", () => {
  let now = 0;
  const breaker = new CircuitBreaker({ threshold: 2, cooldownMs: 1000, clock: () => now });
  breaker.failure();
  breaker.inconclusive();
  expect(breaker.snapshot()).toMatchObject({ state: "closed", consecutiveFaults: 1 });
  breaker.failure();
  expect(breaker.state).toBe("open");
  now = 1000;
  expect(breaker.allow()).toBe(true); // the probe
  expect(breaker.allow()).toBe(false);
  breaker.inconclusive(); // the probe had too little time: the next call probes instead
  expect(breaker.allow()).toBe(true);
  breaker.success();
  expect(breaker.state).toBe("closed");
});
