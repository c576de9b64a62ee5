import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import { readFileSync } from "node:fs";
import { MACROS, markupJson, replaceMacros, type MacroValues } from "../../service/auction/macros.js";

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
    ["not in the table: left as is", "${AUCTION_LOSS}${AUCTION_MBR}${OTHER}", values, "${AUCTION_LOSS}${AUCTION_MBR}${OTHER}"],
    ["one pass: a value holding a macro is not expanded (and is encoded)", "${AUCTION_SEAT_ID}", { ...values, seatId: "${AUCTION_PRICE}" }, "%24%7BAUCTION_PRICE%7D"],
    ["case-sensitive", "${auction_price}", values, "${auction_price}"],
    ["no macro", "https://example.com/x", values, "https://example.com/x"],
  ])("%s", (_name, text, given, want) => {
    expect(replaceMacros(text, given, "url")).toBe(want);
  });

  describe("values are encoded for where they land", () => {
    const hostile = { ...values, auctionId: "x&price=0.000001#", impId: `"><script>alert(1)</script>`, seatId: "a b/c\\d'é😀\ud800" };
    test.each([
      ["url: percent-encoded, a request id cannot add a parameter", "url", "https://dsp.example/win?id=${AUCTION_ID}&price=${AUCTION_PRICE}", "https://dsp.example/win?id=x%26price%3D0.000001%23&price=1.51"],
      ["url: every reserved or non-ASCII character, a lone surrogate as U+FFFD", "url", "https://d.example/${AUCTION_SEAT_ID}", "https://d.example/a%20b%2Fc%5Cd%27%C3%A9%F0%9F%98%80%EF%BF%BD"],
      ["banner: in a URL attribute, percent-encoded", "banner", '<img src="https://t.example/i?a=${AUCTION_ID}&i=${AUCTION_IMP_ID}">', '<img src="https://t.example/i?a=x%26price%3D0.000001%23&i=%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E">'],
      ["banner: in a protocol-relative URL", "banner", "<img src='//t.example/i?a=${AUCTION_ID}'>", "<img src='//t.example/i?a=x%26price%3D0.000001%23'>"],
      ["banner: elsewhere, HTML-escaped", "banner", '<div title="${AUCTION_IMP_ID}">${AUCTION_ID}</div>', '<div title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">x&amp;price=0.000001#</div>'],
      ["native: in a URL (slashes JSON-escaped or not), percent-encoded", "native", '{"link":{"url":"https:\\/\\/a.example\\/c?i=${AUCTION_IMP_ID}"},"imptrackers":["https://t.example/?a=${AUCTION_ID}"]}', '{"link":{"url":"https:\\/\\/a.example\\/c?i=%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E"},"imptrackers":["https://t.example/?a=x%26price%3D0.000001%23"]}'],
      ["native: elsewhere, JSON-escaped", "native", '{"assets":[{"id":1,"title":{"text":"${AUCTION_SEAT_ID}"}}]}', '{"assets":[{"id":1,"title":{"text":"a b/c\\\\d\'é😀\\ud800"}}]}'],
      ["video: a CDATA URL, percent-encoded", "video", "<Impression><![CDATA[https://t.example/i?a=${AUCTION_ID}]]></Impression>", "<Impression><![CDATA[https://t.example/i?a=x%26price%3D0.000001%23]]></Impression>"],
      ["video: elsewhere, XML-escaped", "video", "<AdTitle>${AUCTION_IMP_ID}</AdTitle>", "<AdTitle>&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</AdTitle>"],
    ] as const)("%s", (_name, target, text, want) => {
      expect(replaceMacros(text, hostile, target)).toBe(want);
    });

    const anyId = fc.string({ unit: "grapheme", maxLength: 30 });
    test("property: any id arrives as itself in a URL parameter, an HTML attribute and a native JSON string, and changes no structure", () => {
      const banner = '<div title="${AUCTION_ID}"><img src="https://t.example/i?a=${AUCTION_ID}&b=1"></div>';
      const native = '{"link":{"url":"https://a.example/c?a=${AUCTION_ID}"},"assets":[{"id":1,"title":{"text":"${AUCTION_ID}"}}]}';
      const unescape = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e]!);
      fc.assert(
        fc.property(anyId, (id) => {
          const given = { ...values, auctionId: id };
          const html = replaceMacros(banner, given, "banner");
          expect(html.split('"').length).toBe(banner.split('"').length);
          expect(html.split("<").length).toBe(banner.split("<").length);
          const [, title, src] = /^<div title="([^"]*)"><img src="([^"]*)"><\/div>$/.exec(html)!;
          expect(unescape(title)).toBe(id);
          const url = new URL(unescape(src));
          expect([...url.searchParams]).toEqual([["a", id], ["b", "1"]]);
          const json = JSON.parse(replaceMacros(native, given, "native"));
          expect(json.assets[0].title.text).toBe(id);
          expect(new URL(json.link.url).searchParams.get("a")).toBe(id);
          expect(new URL(replaceMacros("https://d.example/w?a=${AUCTION_ID}&p=1", given, "url")).searchParams.get("p")).toBe("1");
        }),
        { numRuns: 2000 },
      );
    });
  });

  test("property: markupJson is JSON.stringify of replaceMacros, byte for byte (quotes, control characters, surrogate halves at every edge)", () => {
    // Pieces a literal or a value can start or end with: JSON's escapes, both surrogate halves and a whole pair.
    const piece = fc.oneof(fc.constantFrom('"', "\\", "\n", "\u0000", "\u001f", "\u2028", "\ud83d", "\ude00", "😀", "é", "<", "&", "'", "https://t.example/?a=", " "), fc.string({ maxLength: 4 }));
    const text = fc.array(fc.oneof(piece, fc.constantFrom(...MACROS.map((m) => m.macro))), { maxLength: 14 }).map((parts) => parts.join(""));
    const value = fc.array(piece, { maxLength: 4 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, value, value, value, fc.constantFrom("banner", "video", "native") as fc.Arbitrary<"banner" | "video" | "native">, (markup, auctionId, impId, seatId, target) => {
        const given = { ...values, auctionId, impId, seatId };
        // Twice: the second call reads the template's escaped literals from the cache.
        expect(markupJson(markup, given, target)).toBe(JSON.stringify(replaceMacros(markup, given, target)));
        expect(markupJson(markup, given, target)).toBe(JSON.stringify(replaceMacros(markup, given, target)));
      }),
      { numRuns: 3000 },
    );
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
        // values are plain ids, which every target leaves unchanged
        expect(replaceMacros(text, values, "url")).toBe(reference(text, values));
        const long = "x".repeat(pad) + text; // 512 characters and more go through the template cache
        expect(replaceMacros(long, values, "banner")).toBe(reference(long, values));
      }),
      { numRuns: 3000 },
    );
  });
});
