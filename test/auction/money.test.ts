import { describe, expect, test } from "vitest";
import { clearingPrice, PRICE_INCREMENT_MICROS } from "../../service/auction/clearing.js";
import { formatMicros, fromMicros, impressionRevenue, toMicros } from "../../service/auction/money.js";

describe("money", () => {
  test.each([
    ["1.50", 1.5, 1_500_000],
    ["0.01", 0.01, 10_000],
    ["0.1 + 0.2 style float noise", 0.1 + 0.2, 300_000],
    ["a micro", 0.000001, 1],
    ["below half a micro rounds down", 0.0000004, 0],
    ["large CPM", 123456.789, 123_456_789_000],
    ["zero", 0, 0],
  ])("toMicros: %s", (_name, cpm, want) => {
    expect(toMicros(cpm)).toBe(want);
  });

  test.each([
    [1_510_000, "1.51", 1.51],
    [1_500_000, "1.5", 1.5],
    [2_000_000, "2", 2],
    [10_000, "0.01", 0.01],
    [1, "0.000001", 0.000001],
    [0, "0", 0],
    [123_456_789_000, "123456.789", 123456.789],
  ])("formatMicros/fromMicros %i", (micros, text, number) => {
    expect(formatMicros(micros)).toBe(text);
    expect(fromMicros(micros)).toBe(number);
    expect(JSON.stringify(fromMicros(micros))).toBe(text);
  });

  test("1.50 + 0.01 is exactly 1.51 on the wire", () => {
    expect(0.1 + 0.2).not.toBe(0.3); // why the auction never adds floats
    const sum = toMicros(1.5) + PRICE_INCREMENT_MICROS;
    expect(JSON.stringify({ price: fromMicros(sum) })).toBe('{"price":1.51}');
    expect(formatMicros(sum)).toBe("1.51");
  });

  test("every cent from 0.00 to 20.00 plus 0.01 prints as the exact decimal", () => {
    for (let cents = 0; cents <= 2000; cents++) {
      const price = toMicros(cents / 100) + PRICE_INCREMENT_MICROS;
      const want = ((cents + 1) / 100).toFixed(2).replace(/\.?0+$/, "");
      expect(formatMicros(price)).toBe(want);
      expect(String(fromMicros(price))).toBe(want);
    }
  });

  test("impression revenue is CPM / 1000", () => {
    expect(impressionRevenue(toMicros(1.51))).toBeCloseTo(0.00151, 12);
  });
});

describe("clearingPrice", () => {
  const m = toMicros;
  test.each([
    // name, input, want
    ["second price: second + 0.01", { at: 2, winner: m(2), second: m(1.5) }, m(1.51)],
    ["default at is second price", { winner: m(2), second: m(1.5) }, m(1.51)],
    ["floor above second bid", { at: 2, winner: m(2), second: m(0.5), floor: m(1) }, m(1.01)],
    ["no second bid: floor + 0.01", { at: 2, winner: m(2), floor: m(1) }, m(1.01)],
    ["no second bid, no floor: 0.01", { at: 2, winner: m(2) }, m(0.01)],
    ["never above the winner (tie)", { at: 2, winner: m(2), second: m(2) }, m(2)],
    ["never above the winner (within a cent)", { at: 2, winner: m(2), second: m(1.995) }, m(2)],
    ["winner at the floor", { at: 2, winner: m(1), floor: m(1) }, m(1)],
    ["first price pays the bid", { at: 1, winner: m(2), second: m(1.5), floor: m(1) }, m(2)],
    ["exchange-specific at runs as second price", { at: 501, winner: m(2), second: m(1.5) }, m(1.51)],
    ["unknown at 3 runs as second price", { at: 3, winner: m(3), second: m(1) }, m(1.01)],
  ])("%s", (_name, input, want) => {
    expect(clearingPrice(input)).toBe(want);
  });
});
