/** service/auction/deadline.ts: the tmax an auction runs with and the budget its bidders get, from the spec's x-adxkit-auction. */
import { describe, expect, test } from "vitest";
import { auctionRules } from "@adxkit/bindings";
import { bidderBudget, effectiveTmax } from "../../service/auction/deadline.js";

const { minTmaxMs: MIN, maxTmaxMs: MAX, defaultTmaxMs: DEFAULT } = auctionRules;

describe("effectiveTmax", () => {
  test.each([
    ["absent: the default", undefined, DEFAULT],
    ["0: the default", 0, DEFAULT],
    ["negative: the default", -5, DEFAULT],
    ["below the minimum: the minimum", 1, MIN],
    ["inside the range: as asked", MIN + 1, MIN + 1],
    ["above the maximum: the maximum", 100_000, MAX],
    ["past setTimeout's 2^31 ms: the maximum, not an overflow", 2_386_092_942, MAX],
  ])("%s", (_what, tmax, expected) => {
    expect(effectiveTmax(tmax)).toBe(expected);
  });
});

describe("bidderBudget", () => {
  // The exchange keeps max(exchange-margin-ms, exchange-margin-fraction of tmax).
  const kept = (tmax: number) => Math.max(auctionRules.exchangeMarginMs, Math.ceil(tmax * auctionRules.exchangeMarginFraction));
  test.each([
    ["the fraction of a long tmax kept by the exchange", MAX, 0, MAX - kept(MAX)],
    ["at least exchange-margin-ms kept of a short one", MIN, 0, MIN - kept(MIN)],
    ["less the time already spent, in whole milliseconds", MAX, 120.5, Math.floor(MAX - kept(MAX) - 120.5)],
    ["never below 1 ms", MIN, MAX, 1],
  ])("%s", (_what, tmax, elapsed, expected) => {
    expect(bidderBudget(tmax, elapsed)).toBe(expected);
  });
});
