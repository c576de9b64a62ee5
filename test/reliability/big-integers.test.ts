/**
 * Numbers JSON.parse would round (an integer above 2^53 in an `ext`) and fields the exchange does
 * not know (`ext`, `regs`, `source`, OpenRTB 2.6 fields) reach the bidders unchanged, digit for
 * digit: a real bidder on 127.0.0.1 records the raw bytes it receives. A bidder that gets every
 * imp receives the caller's own text with tmax rewritten (service/auction/forward.ts), so even
 * spellings JSON.parse cannot tell apart (`1.0`, `1E2`, `"\u00e9"`) arrive as written; one that
 * gets a subset receives a lossless serialisation, where only those spellings change. Plus the
 * properties of service/json/lossless.ts (same values and errors as JSON.parse; lossless round trip).
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { validateBidRequest } from "@adxkit/bindings";
import { MAX_DEPTH, parseLossless, rawNumbersOf, stringifyLossless } from "../../service/json/lossless.js";
import { startExchange, type TestExchange } from "../auction/helpers.js";

// ---------------------------------------------------------------------------------------------
// parseLossless / stringifyLossless

/** JSON.parse's outcome as comparable text: the value re-serialised, or the error's class. */
function outcome(parse: (text: string) => unknown, text: string): string {
  try {
    return `ok ${JSON.stringify(parse(text))}`;
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
}

/** JSON text with bigint leaves written as their digits. */
function writeJson(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map(writeJson).join(",")}]`;
  if (typeof value === "object" && value !== null) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${writeJson(v)}`).join(",")}}`;
  return JSON.stringify(value);
}

const bigLeaf = fc.oneof(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n }), fc.constantFrom(2n ** 53n + 1n, -(2n ** 63n) - 1n, 12345678901234567890123n));
const treeWithBigInts = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), tie("node"), { maxKeys: 4 })),
  leaf: fc.oneof(bigLeaf, fc.string({ maxLength: 8 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null)),
})).node;

describe("parseLossless / stringifyLossless", () => {
  it("parses like JSON.parse: same value or same failure, on JSON and on token soup", () => {
    const soup = fc
      .array(fc.constantFrom("{", "}", "[", "]", ",", ":", '"', '"a"', '"k":', "12345678901234567890", "-98765432109876543210.5e3", "0", "01", "-", ".", "e", "1", " ", "\\", "true", "null", '"\\u0000adxkit-number:0"', "\n"), { maxLength: 30 })
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(fc.oneof(fc.json(), soup, fc.string()), (text) => {
        expect(outcome(parseLossless, text)).toBe(outcome(JSON.parse, text));
      }),
      { numRuns: 5_000 },
    );
  });

  it("round trip: stringifyLossless(parseLossless(text)) is the text, digit for digit, big integers included", () => {
    fc.assert(
      // A bare number at the top has no holder to keep its text: a bid request is an object.
      fc.property(fc.oneof(fc.json(), treeWithBigInts.map((tree) => writeJson([tree]))), (text) => {
        expect(stringifyLossless(parseLossless(text))).toBe(text);
      }),
      { numRuns: 3_000 },
    );
  });

  it("values are JSON.parse's (validators see numbers); the text is kept aside, invisible to keys and JSON.stringify", () => {
    const value = parseLossless('{"ext":{"id":12345678901234567890123,"__proto__":99999999999999999999,"small":12}}') as any;
    // biome-ignore lint/correctness/noPrecisionLoss: the rounded number is what JSON.parse gives, and the point of the test
    expect(value.ext.id).toBe(12345678901234567890123);
    expect(Object.keys(value.ext)).toEqual(["id", "__proto__", "small"]);
    expect(Object.getPrototypeOf(value.ext)).toBe(Object.prototype);
    expect(({} as any).polluted).toBeUndefined();
    expect(Object.entries(rawNumbersOf(value.ext) ?? {})).toEqual([["id", "12345678901234567890123"], ["__proto__", "99999999999999999999"]]);
    expect(JSON.stringify(value)).toBe('{"ext":{"id":1.2345678901234568e+22,"__proto__":100000000000000000000,"small":12}}');
    expect(stringifyLossless(value)).toBe('{"ext":{"id":12345678901234567890123,"__proto__":99999999999999999999,"small":12}}');
  });

  it("a number the exchange changed is written as its new value; copies by spread keep the texts", () => {
    const value = parseLossless('{"tmax":12345678901234567890,"ext":{"a":12345678901234567890,"b":22345678901234567890}}') as any;
    value.ext.b = 7;
    expect(stringifyLossless({ ...value, tmax: 90 })).toBe('{"tmax":90,"ext":{"a":12345678901234567890,"b":7}}');
    expect(stringifyLossless({ ...value })).toBe('{"tmax":12345678901234567890,"ext":{"a":12345678901234567890,"b":7}}');
  });

  it("a string that looks like the internal marker stays a string (the marker holds a random per-process nonce)", () => {
    const text = '{"s":"\\u0000adxkit-number:0000000000000000:0","n":12345678901234567890}';
    expect(stringifyLossless(parseLossless(text))).toBe(text);
  });

  // No clock is read: a scan that went back over the text for each quote or digit would take
  // hours on a megabyte, far past this test's timeout, on any machine.
  it("stays linear on hostile text: 1 MiB of escaped quotes without an end, or of long numbers", () => {
    expect(() => parseLossless(`["1234567890123456${'\\"'.repeat(512 * 1024)}`)).toThrow(SyntaxError);
    expect(() => parseLossless(`[${"1234567890123456,".repeat(60_000)}1]`)).not.toThrow();
    expect(() => parseLossless(`"${"9".repeat(1024 * 1024)}`)).toThrow(SyntaxError);
  });

  it(`refuses nesting deeper than ${MAX_DEPTH} levels (JSON.stringify would overflow the stack forwarding it)`, () => {
    const nest = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    expect(stringifyLossless(parseLossless(nest(MAX_DEPTH)))).toBe(nest(MAX_DEPTH));
    expect(() => parseLossless(nest(MAX_DEPTH + 1))).toThrow(SyntaxError);
    expect(() => parseLossless(`{"s":"${"[".repeat(10_000)}"}`)).not.toThrow(); // brackets in strings do not nest
    expect(() => parseLossless(`["\\"${"[".repeat(10_000)}"]`)).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------
// Through the exchange to a real bidder.

interface RawBidder {
  server: Server;
  endpoint: string;
  bodies: string[];
  contentTypes: (string | undefined)[];
}

/** A bidder on 127.0.0.1 that keeps the exact text of every bid request and answers no-bid. */
async function startRawBidder(): Promise<RawBidder> {
  const bodies: string[] = [];
  const contentTypes: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      bodies.push(Buffer.concat(chunks).toString("utf8"));
      contentTypes.push(request.headers["content-type"]);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}/bid`, bodies, contentTypes };
}

/** A bid request with OpenRTB 2.6 fields, extensions and numbers JSON.parse cannot hold, as raw text. */
function requestText(id: string, imps = 1): string {
  const imp = (n: number) =>
    `{"id":"${n}","tagid":"placement-${n}","bidfloor":0.50,"banner":{"w":320,"h":50,"ext":{"n":98765432109876543210}},` +
    `"rwdd":1,"ssai":2,"qty":{"multiplier":1.5,"sourcetype":1,"vendor":"measure.example"},"dt":1700000000000.25,` +
    `"refresh":{"refsettings":[{"reftype":1,"minint":30}],"count":2},"ext":{"id":12345678901234567890123,"gpid":"/1/home#${n}"}}`;
  return (
    `{"id":"${id}","tmax":500,"imp":[${Array.from({ length: imps }, (_, i) => imp(i + 1)).join(",")}],` +
    `"app":{"id":"app-1","bundle":"com.example.game","publisher":{"id":"pub-1","ext":{"seller":18446744073709551615}}},` +
    `"device":{"os":"Android","geo":{"country":"USA"},"ip":"192.0.2.1","sua":{"browsers":[{"brand":"Chromium","version":["120","0"]}],"mobile":1,"source":2},"ext":{"ifv":-123456789012345678901234567890}},` +
    `"user":{"id":"u-1","eids":[{"source":"id.example","uids":[{"id":"abc","atype":1}]}],"ext":{"consent":"CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA"}},` +
    `"regs":{"coppa":0,"gdpr":1,"us_privacy":"1YNN","gpp":"DBACNYA~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA~1YNN","gpp_sid":[2,6],"ext":{"dsa":{"required":2,"transparency":[{"domain":"x.example","dsaparams":[1,2]}]}}},` +
    `"source":{"fd":1,"tid":"tid-1","pchain":"abc:def","schain":{"complete":1,"ver":"1.0","nodes":[{"asi":"exchange.example","sid":"9007199254740993","hp":1,"rid":"r"}]},"ext":{"omidpn":"x"}},` +
    `"cattax":2,"acat":["IAB1-1"],"wlangb":["en","fr"],"ext":{"id":12345678901234567890123,"spellings":{"one":1.0,"hundred":1E2,"name":"caf\\u00e9 \\u0026"},"nested":{"list":[1,18446744073709551615,-9223372036854775809,3.141592653589793238462643383279]},"unicode":"é\u2028😀 \\" \\\\ \\n"}}`
  );
}

describe("the exchange forwards unknown fields and big integers to a real bidder unchanged", () => {
  let bidder: RawBidder;
  let exchange: TestExchange;

  beforeAll(async () => {
    bidder = await startRawBidder();
    exchange = await startExchange([{ id: "dsp-1", endpoint: bidder.endpoint, seat: "seat-1" }]);
  });
  afterAll(async () => {
    await exchange?.close();
    await new Promise((resolve) => bidder?.server.close(resolve));
  });

  it("the request is valid (unknown and 2.6 fields are accepted)", () => {
    expect(validateBidRequest(JSON.parse(requestText("x"))).errors).toEqual([]);
  });

  it("the bidder receives the request byte for byte, only tmax lowered by the exchange's margin", async () => {
    const text = requestText("big-1");
    const answer = await exchange.auction(text);
    expect(answer.status).toBe(204);
    expect(bidder.bodies).toHaveLength(1);
    const received = bidder.bodies[0];
    expect(bidder.contentTypes[0]).toMatch(/^application\/json/);
    const tmax = /"tmax":(\d+)/.exec(received)?.[1];
    expect(Number(tmax)).toBeGreaterThan(0);
    expect(Number(tmax)).toBeLessThan(500);
    expect(received.replace(`"tmax":${tmax}`, '"tmax":500')).toBe(text);
    // The point of it, spelled out: digits that JSON.parse would have rounded.
    // Spellings JSON.parse cannot tell apart arrive as written too.
    for (const spelling of ['"bidfloor":0.50', '"one":1.0', '"hundred":1E2', '"name":"caf\\u00e9 \\u0026"']) expect(received).toContain(spelling);
    for (const digits of ['"id":12345678901234567890123', '"n":98765432109876543210', '"seller":18446744073709551615', '"ifv":-123456789012345678901234567890', "-9223372036854775809", "3.141592653589793238462643383279", '"sid":"9007199254740993"']) {
      expect(received).toContain(digits);
    }
  });

  it("the same for many auctions in parallel (shared bodies, pools)", async () => {
    bidder.bodies.length = 0;
    const texts = Array.from({ length: 20 }, (_, i) => requestText(`par-${i}`, 1 + (i % 3)));
    const answers = await Promise.all(texts.map((t) => exchange.auction(t)));
    expect(answers.map((a) => a.status)).toEqual(texts.map(() => 204));
    const received = new Map(bidder.bodies.map((b) => [JSON.parse(b).id as string, b.replace(/"tmax":\d+/, '"tmax":500')]));
    for (const t of texts) expect(received.get(JSON.parse(t).id)).toBe(t);
  });

  it("a bidder buying only some formats gets only those imps, big integers still intact", async () => {
    const video = await startRawBidder();
    const both = await startExchange([
      { id: "dsp-banner", endpoint: bidder.endpoint, seat: "seat-1", formats: [1] },
      { id: "dsp-video", endpoint: video.endpoint, seat: "seat-2", formats: [3] },
    ]);
    try {
      bidder.bodies.length = 0;
      const videoImp = '{"id":"v","ext":{"big":12345678901234567890123},"video":{"mimes":["video/mp4"],"w":640,"h":480,"minduration":5,"maxduration":30,"protocols":[2,3]}}';
      const text = requestText("subset-1").replace('}}],"app":', `}},${videoImp}],"app":`);
      const request = JSON.parse(text);
      expect(validateBidRequest(JSON.parse(text)).errors).toEqual([]);
      expect((await both.auction(text)).status).toBe(204);
      expect(bidder.bodies).toHaveLength(1);
      expect(video.bodies).toHaveLength(1);
      const banner = JSON.parse(bidder.bodies[0]);
      const onlyVideo = JSON.parse(video.bodies[0]);
      expect(banner.imp.map((i: { id: string }) => i.id)).toEqual(["1"]);
      expect(onlyVideo.imp.map((i: { id: string }) => i.id)).toEqual(["v"]);
      expect(video.bodies[0]).toContain('"ext":{"big":12345678901234567890123}');
      // A subset is serialised: values and big integers intact, spellings normalised.
      expect(video.bodies[0]).toContain('"ext":{"id":12345678901234567890123,"spellings":{"one":1,"hundred":100,"name":"café &"},"nested":{"list":[1,18446744073709551615,-9223372036854775809,3.141592653589793238462643383279]}');
      expect(bidder.bodies[0]).toContain('"ext":{"id":12345678901234567890123,"gpid":"/1/home#1"}');
      // Everything but imp and tmax is the request as sent.
      for (const key of ["app", "device", "user", "regs", "source", "cattax", "acat", "wlangb", "ext"]) {
        expect(banner[key]).toEqual(request[key]);
      }
    } finally {
      await both.close();
      await new Promise((resolve) => video.server.close(resolve));
    }
  });
});
