import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { readFileSync } from "node:fs";
import { MACROS, replaceMacros, type MacroValues } from "../../service/auction/macros.js";

const values: MacroValues = { auctionId: "a-1", bidId: "resp-9", impId: "2", seatId: "seat-7", adId: "ad-3", price: "1.51", currency: "USD" };

describe("macros", () => {
  test("the table is the spec's components.x-macros", () => {
    const spec = parse(readFileSync(new URL("../../spec/openapi/bidding.yaml", import.meta.url), "utf8"));
    expect(MACROS.map((m) => m.macro)).toEqual(spec.components["x-macros"].map((m: { macro: string }) => m.macro));
    expect(MACROS.map((m) => m.source)).toEqual(spec.components["x-macros"].map((m: { source: string }) => m.source));
    const fields: (keyof MacroValues)[] = ["auctionId", "bidId", "impId", "seatId", "adId", "price", "currency"];
    expect(MACROS.map((m) => m.field).sort()).toEqual([...fields].sort());
  });

  test.each([
    ["every macro", "${AUCTION_ID}|${AUCTION_BID_ID}|${AUCTION_IMP_ID}|${AUCTION_SEAT_ID}|${AUCTION_AD_ID}|${AUCTION_PRICE}|${AUCTION_CURRENCY}", values, "a-1|resp-9|2|seat-7|ad-3|1.51|USD"],
    ["repeated", "p=${AUCTION_PRICE}&q=${AUCTION_PRICE}", values, "p=1.51&q=1.51"],
    ["unspecified source is empty", "b=${AUCTION_BID_ID}&ad=${AUCTION_AD_ID}", { ...values, bidId: undefined, adId: undefined }, "b=&ad="],
    ["literal: no URL-encoding", "x=${AUCTION_SEAT_ID}", { ...values, seatId: "a b&c/d" }, "x=a b&c/d"],
    ["not in the table: left as is", "${AUCTION_LOSS}${AUCTION_MBR}${OTHER}", values, "${AUCTION_LOSS}${AUCTION_MBR}${OTHER}"],
    ["one pass: a value holding a macro is not expanded", "${AUCTION_SEAT_ID}", { ...values, seatId: "${AUCTION_PRICE}" }, "${AUCTION_PRICE}"],
    ["case-sensitive", "${auction_price}", values, "${auction_price}"],
    ["no macro", "https://example.com/x", values, "https://example.com/x"],
  ])("%s", (_name, text, given, want) => {
    expect(replaceMacros(text, given)).toBe(want);
  });

  test("same result as one global regex replace, on texts made of macro fragments (short and cached long ones)", () => {
    const byName = new Map(MACROS.map((m) => [m.macro.slice(2, -1), m.field]));
    const reference = (text: string, v: MacroValues) => text.replace(/\$\{(AUCTION_[A-Z_]+)\}/g, (all, name: string) => (byName.has(name) ? (v[byName.get(name)!] ?? "") : all));
    const fragment = fc.oneof(
      fc.constantFrom(...MACROS.map((m) => m.macro), "${AUCTION_", "${AUCTION_PRICE", "}", "${", "$", "{AUCTION_ID}", "${AUCTION_LOSS}", "${AUCTION_ID }", "${AUCTION_ID${AUCTION_PRICE}}"),
      fc.string({ maxLength: 5 }),
    );
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 12 }), fc.nat(600), (parts, pad) => {
        const text = parts.join("");
        expect(replaceMacros(text, values)).toBe(reference(text, values));
        const long = "x".repeat(pad) + text; // 512 characters and more go through the template cache
        expect(replaceMacros(long, values)).toBe(reference(long, values));
      }),
      { numRuns: 3000 },
    );
  });
});
