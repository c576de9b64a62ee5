// Currency conversion in integer micros: exact decimal rates, pairs found as Prebid Server finds
// them (direct, inverse, across one currency), one rounding (half to even), every problem of a
// rates file at once.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CurrencyConverter, CurrencyRatesError } from "../../service/auction/currency.js";

const rates = new CurrencyConverter({
  dataAsOf: "2026-11-25",
  conversions: { USD: { EUR: 0.9, GBP: 0.8, JPY: 150 }, EUR: { CHF: 0.95 } },
});

describe("CurrencyConverter", () => {
  it.each([
    ["same currency", 1_234_567, "USD", "USD", 1_234_567],
    ["direct", 2_000_000, "USD", "EUR", 1_800_000],
    ["direct, to a currency of large units", 2_000_000, "USD", "JPY", 300_000_000],
    ["inverse: 1 EUR is 1/0.9 USD", 900_000, "EUR", "USD", 1_000_000],
    ["inverse, rounded: 1 EUR = 1.1111111… USD", 1_000_000, "EUR", "USD", 1_111_111],
    ["across USD: GBP → EUR is 0.9 / 0.8", 1_000_000, "GBP", "EUR", 1_125_000],
    ["across USD: JPY → GBP", 150_000_000, "JPY", "GBP", 800_000],
    ["direct beats across", 1_000_000, "EUR", "CHF", 950_000],
  ])("%s: %d %s → %s = %d", (_name, micros, from, to, expected) => {
    expect(rates.convert(micros, from, to)).toBe(expected);
  });

  it("rounds half to even, once", () => {
    const halves = new CurrencyConverter({ conversions: { AAA: { BBB: 0.5 } } });
    expect(halves.convert(1, "AAA", "BBB")).toBe(0); // 0.5 → 0
    expect(halves.convert(3, "AAA", "BBB")).toBe(2); // 1.5 → 2
    expect(halves.convert(5, "AAA", "BBB")).toBe(2); // 2.5 → 2
    expect(halves.convert(7, "AAA", "BBB")).toBe(4); // 3.5 → 4
  });

  it("reads a rate as the decimal written, not the binary float near it", () => {
    // 0.1 × 3 in floats is 0.30000000000000004; as a decimal fraction it is exact.
    const tenth = new CurrencyConverter({ conversions: { AAA: { BBB: 0.1 } } });
    expect(tenth.convert(3_000_005, "AAA", "BBB")).toBe(300_000); // 300000.5 → 300000 (even)
    expect(new CurrencyConverter({ conversions: { AAA: { BBB: 1e-7 } } }).convert(20_000_000, "AAA", "BBB")).toBe(2);
  });

  it("has no rate for a currency no pair joins", () => {
    expect(rates.has("USD", "SEK")).toBe(false);
    expect(rates.convert(1_000_000, "USD", "SEK")).toBeUndefined();
    expect(new CurrencyConverter().convert(1, "USD", "EUR")).toBeUndefined();
    expect(new CurrencyConverter().convert(1, "USD", "USD")).toBe(1);
  });

  it("a round trip through another currency comes back within a micro per conversion", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000_000_000 }), fc.constantFrom("EUR", "GBP", "JPY"), (micros, other) => {
        const there = rates.convert(micros, "USD", other)!;
        const back = rates.convert(there, other, "USD")!;
        const rate = Number(rates.convert(1_000_000_000, "USD", other)) / 1_000_000_000;
        return Math.abs(back - micros) <= Math.ceil(1 / rate) + 1;
      }),
      { numRuns: 500 },
    );
  });

  it("refuses a file with every problem listed", () => {
    const bad = () => new CurrencyConverter({ conversions: { usd: { EUR: 1 }, USD: { EUR: -1, GBP: "0.8" as unknown as number, JPY: Infinity } } });
    expect(bad).toThrow(CurrencyRatesError);
    try {
      bad();
    } catch (error) {
      // The CurrencyRates schema's messages, each naming the value found.
      expect((error as CurrencyRatesError).problems).toEqual(
        expect.arrayContaining([
          'conversions is "usd"; expected an ISO 4217 alpha currency code, three capital letters (USD)',
          "conversions.USD.EUR is -1; expected more than 0",
          'conversions.USD.GBP is the string "0.8"; expected a number',
        ]),
      );
    }
    expect(() => new CurrencyConverter({} as never)).toThrow(/conversions is missing/);
  });
});
