import { describe, expect, test } from "vitest";
import { isHtmlMarkup, isNativeMarkup, isVastMarkup, markupFits, markupKind, rootElementName } from "../../service/auction/markup.js";
import { HTML, NATIVE, VAST } from "./helpers.js";

describe("markup checks", () => {
  test.each([
    ["html snippet", HTML, true],
    ["script tag", "<script src='https://a.example/x.js'></script>", true],
    ["plain text", "buy now!", false],
    ["empty", "", false],
    ["a less-than sign is not a tag", "price < 3 and > 1", false],
    ["a VAST document is not banner markup", VAST, false],
    ["a native JSON document is not banner markup", JSON.stringify({ link: { url: "<a>" } }), false],
  ])("banner: %s", (_name, adm, want) => {
    expect(isHtmlMarkup(adm)).toBe(want);
  });

  test.each([
    ["native 1.2", NATIVE, true],
    ["wrapped {native: …}", JSON.stringify({ native: JSON.parse(NATIVE) }), true],
    ["not JSON", "{link:", false],
    ["JSON but not a native response (no link)", JSON.stringify({ assets: [] }), false],
    ["a JSON array", "[]", false],
    ["HTML", HTML, false],
  ])("native: %s", (_name, adm, want) => {
    expect(isNativeMarkup(adm)).toBe(want);
  });

  test.each([
    ["VAST 3.0 with declaration", VAST, true],
    ["VAST with a leading comment", "<!-- c --><VAST version=\"2.0\"></VAST>", true],
    ["not XML", "VAST", false],
    ["unclosed", "<VAST version=\"3.0\"><Ad>", false],
    ["another root", "<?xml version=\"1.0\"?><DAAST></DAAST>", false],
    ["HTML", HTML, false],
    ["a VAST URL is not a document", "https://ads.example/vast.xml", false],
  ])("video: %s", (_name, adm, want) => {
    expect(isVastMarkup(adm)).toBe(want);
  });

  test("root element name skips the prolog", () => {
    expect(rootElementName('\uFEFF<?xml version="1.0"?>\n<!DOCTYPE x>\n<!-- a -->\n<VAST/>')).toBe("VAST");
    expect(rootElementName("text")).toBeUndefined();
  });

  test("an imp offering several types takes markup of any of them", () => {
    expect(markupFits(VAST, ["video", "banner"])).toBe(true);
    expect(markupFits(HTML, ["video", "banner"])).toBe(true);
    expect(markupFits(NATIVE, ["video", "banner"])).toBe(false);
    // A cached verdict does not leak across ad types.
    expect(markupFits(VAST, ["banner"])).toBe(false);
  });

  test("markupKind names the type the markup fits (its macro values are escaped for it)", () => {
    expect(markupKind(VAST, ["video", "native", "banner"])).toBe("video");
    expect(markupKind(NATIVE, ["video", "native", "banner"])).toBe("native");
    expect(markupKind(HTML, ["video", "native", "banner"])).toBe("banner");
    expect(markupKind(NATIVE, ["banner"])).toBeUndefined();
  });
});
