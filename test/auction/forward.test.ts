/**
 * service/auction/forward.ts: bidders get the caller's own JSON text with only the top-level
 * tmax rewritten. Generated texts vary white space, number spellings, \u-escaped keys, nested
 * and repeated tmax keys; whenever a patched text comes back it must parse to exactly the
 * caller's request with the new tmax, and a plain request (one tmax key) must always be patched.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { forwardedBody, parseBidRequestBody, patchTmax } from "../../service/auction/forward.js";

const space = fc.constantFrom("", " ", "\n", "\t", "  \r\n");
/** The key tmax, each letter possibly written as its \u escape (the m's hex digit in either case). */
const tmaxSpelling = fc
  .tuple(fc.constantFrom("t", "\\u0074"), fc.constantFrom("m", "\\u006d", "\\u006D"), fc.constantFrom("a", "\\u0061"), fc.constantFrom("x", "\\u0078"))
  .map((letters) => `"${letters.join("")}"`);
const otherKey = fc.oneof(
  fc.constantFrom('"id"', '"imp"', '"ext"', '"tmaxx"', '"xtmax"', '"t"', '"tmax "', '"TMAX"'),
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
);
const numberSpelling = fc.oneof(
  fc.integer({ min: -1000, max: 100_000 }).map(String),
  fc.constantFrom("150.0", "1.5e2", "1E2", "-0", "0.5", "12345678901234567890123"),
);
const stringValue = fc.oneof(
  fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
  // Strings that hold the letters of a tmax key, quotes, braces and commas.
  fc.constantFrom('"tmax"', '"{\\"tmax\\":1}"', '",\\"tmax\\":2"', '"a,"', '"{"', '"\\\\"', '"t\\u006dax"'),
);

/** JSON text, written token by token with random white space. */
const valueText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", maxDepth: 3 }, numberSpelling, stringValue, fc.constantFrom("true", "false", "null"), tie("array"), tie("object")),
  array: fc.tuple(space, fc.array(fc.tuple(tie("value"), space), { maxLength: 3 })).map(([s, items]) => `[${s}${items.map(([v, w]) => v + w).join(",")}]`),
  object: fc
    .tuple(space, fc.array(fc.tuple(fc.oneof(otherKey, tmaxSpelling), space, space, tie("value"), space), { maxLength: 4 }))
    .map(([s, members]) => `{${s}${members.map(([k, a, b, v, c]) => `${k}${a}:${b}${v}${c}`).join(",")}}`),
})).value as fc.Arbitrary<string>;

/** A top-level object: members in random order, perhaps a tmax key (maybe escaped, maybe twice), nested values that may hold tmax keys. */
const requestText = fc
  .tuple(
    space,
    fc.array(fc.tuple(otherKey, space, valueText), { minLength: 1, maxLength: 5 }),
    fc.array(fc.tuple(tmaxSpelling, space, numberSpelling), { maxLength: 2 }),
    fc.nat(),
  )
  .map(([s, members, tmaxes, seed]) => {
    const all = [...members, ...tmaxes].map(([k, w, v]) => `${k}:${w}${v}`);
    // Rotate so the tmax members land anywhere among the others.
    const at = all.length === 0 ? 0 : seed % all.length;
    return `${s}{${s}${[...all.slice(at), ...all.slice(0, at)].join(`,${s}`)}${s}}${s}`;
  });

/** patchTmax as it was written first, with one regular expression over the whole text: what the search from the key's end must equal. */
function patchTmaxByRegex(text: string, hasTmax: boolean, tmax: number): string | undefined {
  if (!hasTmax) {
    const open = text.indexOf("{");
    if (open === -1 || /^\s*\}/.test(text.slice(open + 1, open + 64))) return undefined;
    return `${text.slice(0, open + 1)}"tmax":${tmax},${text.slice(open + 1)}`;
  }
  const tmaxKey = /[{,]\s*"(?:t|\\u0074)(?:m|\\u006[dD])(?:a|\\u0061)(?:x|\\u0078)"\s*:\s*/g;
  const first = tmaxKey.exec(text);
  if (first === null || tmaxKey.exec(text) !== null) return undefined;
  const at = first.index + first[0].length;
  const value = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  value.lastIndex = at;
  const number = value.exec(text);
  if (number === null) return undefined;
  return `${text.slice(0, at)}${tmax}${text.slice(at + number[0].length)}`;
}

describe("patchTmax", () => {
  it("finds the same tmax key as a regular expression over the whole text (escaped keys, keys in strings, repeats)", () => {
    fc.assert(
      fc.property(requestText, fc.integer({ min: 1, max: 5000 }), (text, tmax) => {
        const request = JSON.parse(text);
        expect(patchTmax(text, Object.hasOwn(request, "tmax"), tmax)).toBe(patchTmaxByRegex(text, Object.hasOwn(request, "tmax"), tmax));
      }),
      { numRuns: 1000 },
    );
  });

  it("a patched text parses to the caller's request with only the top-level tmax changed", () => {
    let patched = 0;
    fc.assert(
      fc.property(requestText, fc.integer({ min: 1, max: 5000 }), (text, tmax) => {
        const request = JSON.parse(text);
        const result = patchTmax(text, Object.hasOwn(request, "tmax"), tmax);
        if (result === undefined) return;
        patched++;
        expect(JSON.parse(result)).toEqual({ ...request, tmax });
      }),
      { numRuns: 4000 },
    );
    // Not a property that holds by giving up: most generated texts are patched.
    expect(patched).toBeGreaterThan(1000);
  });

  it("a request whose only tmax key is the top-level one (or that has none) is always patched", () => {
    const plain = fc
      .tuple(fc.boolean(), space, numberSpelling, fc.array(fc.tuple(fc.constantFrom('"id"', '"imp"', '"ext"', '"app"'), fc.constantFrom("1", '"x"', "[1,2]", '{"a":{"b":1.0}}')), { minLength: 1, maxLength: 4 }))
      .map(([withTmax, s, n, members]) => `{${[...members.map(([k, v]) => `${k}:${s}${v}`), ...(withTmax ? [`"tmax":${s}${n}`] : [])].join(",")}}`);
    fc.assert(
      fc.property(plain, fc.integer({ min: 1, max: 5000 }), (text, tmax) => {
        const request = JSON.parse(text);
        const result = patchTmax(text, Object.hasOwn(request, "tmax"), tmax);
        expect(result).toBeDefined();
        expect(JSON.parse(result!)).toEqual({ ...request, tmax });
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ["replaces the number, keeping every other byte", '{"id":"a", "tmax" : 1.5e2 ,"n":1.0}', true, '{"id":"a", "tmax" : 90 ,"n":1.0}'],
    ["adds tmax when the request has none", ' {"id":"a","ext":{"tmax":5}}', false, ' {"tmax":90,"id":"a","ext":{"tmax":5}}'],
    ["gives up on a second tmax key anywhere", '{"tmax":100,"ext":{"tmax":5}}', true, undefined],
    ["gives up on a repeated top-level key", '{"tmax":100,"tmax":200}', true, undefined],
    ["sees an escaped top-level key beside a nested plain one", '{"t\\u006dax":100,"ext":{"tmax":5}}', true, undefined],
    ["ignores tmax inside strings", '{"s":",\\"tmax\\":1","tmax":7}', true, '{"s":",\\"tmax\\":1","tmax":90}'],
  ])("%s", (_name, text, hasTmax, expected) => {
    expect(patchTmax(text, hasTmax, 90)).toBe(expected);
  });
});

describe("forwardedBody", () => {
  const text = '{"id":"r","tmax":300,"imp":[{"id":"1","ext":{"n":98765432109876543210}},{"id":"2"}],"ext":{"big":12345678901234567890123,"f":1.0}}';

  it("sends the caller's text for all imps, with only tmax changed", () => {
    const request = parseBidRequestBody(text) as { imp: { id: string }[] };
    expect(forwardedBody(request, undefined, 270)).toBe(text.replace('"tmax":300', '"tmax":270'));
  });

  it("serialises a subset of imps from a lossless parse of the caller's text: big integers intact", () => {
    const request = parseBidRequestBody(text) as { imp: { id: string }[] };
    // The plain parse rounds: the digits come from the text, not from the parsed object.
    expect(String((request as unknown as { ext: { big: number } }).ext.big)).not.toBe("12345678901234567890123");
    expect(forwardedBody(request, [request.imp[1]], 270)).toBe('{"id":"r","tmax":270,"imp":[{"id":"2"}],"ext":{"big":12345678901234567890123,"f":1}}');
    expect(forwardedBody(request, [request.imp[0]], 270)).toContain('"imp":[{"id":"1","ext":{"n":98765432109876543210}}]');
  });

  it("serialises a request whose tmax key cannot be told apart, big integers intact", () => {
    const twice = '{"id":"r","tmax":300,"ext":{"tmax":1,"big":12345678901234567890123},"imp":[{"id":"1"}]}';
    expect(forwardedBody(parseBidRequestBody(twice) as { imp: { id: string }[] }, undefined, 90)).toBe('{"id":"r","tmax":90,"ext":{"tmax":1,"big":12345678901234567890123},"imp":[{"id":"1"}]}');
  });

  it("serialises an object that was not parsed from text", () => {
    expect(forwardedBody({ id: "r", imp: [{ id: "1" }, { id: "2" }] } as { imp: { id: string }[] }, [{ id: "2" }], 5)).toBe('{"id":"r","imp":[{"id":"2"}],"tmax":5}');
  });
});
