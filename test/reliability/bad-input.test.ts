/**
 * Bad input, generated (fast-check), thrown at every endpoint through Fastify inject: at least
 * 10,000 runs per endpoint, split across a few properties (see RUNS).
 *
 * - Reports (A GET/POST, B POST): always HTTP 200 and the envelope; -2 for bad parameters, -3
 *   for wrong credentials (before anything else).
 * - Auction: HTTP 400 `{errors:[…]}` for a bad request, 413 `{errors:[{rule:"body-too-large"}]}`
 *   over the 1 MiB body limit (service/app.ts' error handler); the bidder is never called.
 * - Always: no 5xx, no prototype polluted, the process keeps answering.
 * - B's string filters (placement_id, app_bundle_id) with quotes, semicolons, SQL wildcards and
 *   control characters return the rows of exactly those literal values (or none), never an
 *   error nor another publisher's rows.
 *
 * Speed: credentials are verified by a DuckDB lookup (~2 ms); the app gets the real store with
 * verifyCredentials memoised for the test's valid credentials, so a run costs an inject, not a
 * query. Wrong credentials still go through the real lookup.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { reportStatusMessage, validators } from "@adxkit/bindings";
import { buildApp } from "../../service/app.js";
import type { BillingClaims } from "../../service/auction/billing-token.js";
import { SealKeyRing, sealKey } from "../../service/auction/token-seal.js";
import { registerExchange, type ExchangeHandle } from "../../service/auction/index.js";
import { openStore } from "../../service/store/index.js";
import type { Account, Fact, ReportStore } from "../../service/store/store.js";

const A = "/api/report/demand_report_v2";
const B = "/api/report/v1";
const AUCTION = "/openrtb2/auction";
const BODY_LIMIT = 1024 * 1024;

/** Runs per endpoint (each ≥ 10,000 in total). */
const RUNS = { mixed: 9_400, credentials: 300, oversized: 300, filters: 400, billing: 10_000 } as const;
/**
 * A property of thousands of runs takes about 7 s alone and up to 111 s beside two CPU-bound
 * processes (`npm run test:busy`): each suite gets its own timeout, far above that, so its
 * outcome never depends on the machine's speed.
 */
const SUITE_TIMEOUT = { timeout: 600_000 };
const BILLING_KEYS = new SealKeyRing([sealKey("bad-input-test-secret-0123456789abcdef")]);

// ---------------------------------------------------------------------------------------------
// Fixtures: an in-memory store with facts whose strings are hostile, two publishers, one bidder.

const nasty = [
  "pl-1",
  "com.example.app",
  "x' OR '1'='1",
  "'; DROP TABLE facts; --",
  'a"b\\c',
  "%",
  "_",
  "pl-%",
  "com.example.%",
  "line\nbreak\ttab\u0001\u001f\u007f",
  "$1",
  "?",
  "ünïcödé ✓ \u{1F600}",
  " leading and trailing ",
  "",
];

const facts: Fact[] = [];
for (const [i, value] of nasty.entries()) {
  for (const publisher_id of ["pub-1", "pub-2"]) {
    facts.push({ side: "supply", date_hour: "2026-10-01T05:00:00", publisher_id, app_bundle_id: value, placement_id: nasty[(i + 3) % nasty.length], ad_format: 1, platform: 2, country: "USA", request: publisher_id === "pub-1" ? i + 1 : 1000 + i, response: 0, impression: 0, revenue: 0 });
  }
}
facts.push({ side: "demand", date_hour: "2026-10-01T05:00:00", bidder_id: "dsp-1", ad_format: 1, platform: 2, request: 10, response: 5, impression: 1, revenue: 0.5 });

let store: ReportStore;
let app: FastifyInstance;
let exchange: ExchangeHandle;
let bidder: Server;
let bidderCalls = 0;
const creds: Record<"demand" | "supply", { userid: string; authorization: string }> = {} as never;
let prototypeKeys: string[];

/** The real store, with verifyCredentials memoised (valid credentials are checked once). */
function memoisedCredentials(real: ReportStore): ReportStore {
  const cache = new Map<string, Promise<Account | null>>();
  const known = () => new Set(Object.values(creds).map((c) => `${c.userid}\u0000${c.authorization}`));
  let valid: Set<string> | undefined;
  const verify = (userid: string, authorization: string) => {
    const key = `${userid}\u0000${authorization}`;
    valid ??= known();
    if (!valid.has(key)) return real.verifyCredentials(userid, authorization);
    let hit = cache.get(key);
    if (hit === undefined) cache.set(key, (hit = real.verifyCredentials(userid, authorization)));
    return hit;
  };
  return new Proxy(real, {
    get(target, property) {
      if (property === "verifyCredentials") return verify;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

beforeAll(async () => {
  prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
  store = await openStore({ db: ":memory:" });
  await store.ingest(facts);
  creds.demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
  creds.supply = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
  bidder = createServer((request, response) => {
    bidderCalls++;
    request.resume();
    request.on("end", () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => bidder.listen(0, "127.0.0.1", resolve));
  const port = (bidder.address() as { port: number }).port;
  app = await buildApp({
    store: memoisedCredentials(store),
    extend: (instance) => {
      exchange = registerExchange(instance, {
        bidders: [{ id: "dsp-1", endpoint: `http://127.0.0.1:${port}/bid`, seat: "seat-1" }],
        sink: { ingest: async () => 0 },
        billingKeys: BILLING_KEYS,
        publicUrl: "http://exchange.test",
        openAuction: true,
      });
    },
  });
});

afterAll(async () => {
  await app?.close();
  await exchange?.close();
  await new Promise((resolve) => bidder?.close(resolve));
  await store?.close();
});

// ---------------------------------------------------------------------------------------------
// Generators shared by the endpoints.

interface Case {
  payload: string | Buffer;
  contentType?: string;
  /** What the case is, for the failure message. */
  what: string;
}

/** fast-check prints counterexamples: keep a megabyte payload to its first 300 characters. */
function short<T extends Case>(c: T): T {
  return Object.assign(c, { [fc.toStringMethod]: () => `${c.what} [${c.contentType ?? "application/json"}] ${JSON.stringify(c.payload.toString().slice(0, 300))}${c.payload.length > 300 ? `… (${c.payload.length} bytes)` : ""}` });
}

const json = (value: unknown) => JSON.stringify(value);
const sqlish = ["'", '"', ";", "--", "/*", "*/", "%", "_", "\\", "\u0000", "\u0001", "\n", "\r", "\t", "\u2028", "\ufeff", "\ud800", " OR 1=1", "'; DROP TABLE accounts; --", "$1", "?", "`"];
const sqlString = fc.array(fc.oneof(fc.constantFrom(...sqlish), fc.string({ maxLength: 4 })), { maxLength: 8 }).map((parts) => parts.join(""));
const anyString = fc.oneof(fc.string({ maxLength: 20, unit: "binary" }), sqlString);
const nanLike = fc.constantFrom("NaN", "-NaN", "Infinity", "-Infinity", "1e999", "-1e999", "0x10", "0b1", "1_000", " 1", "1 ", "+1", ".5", "1.", "", "null", "undefined", "true", "١٢", "1e", "--1");
const hugeNumberText = fc.oneof(
  fc.constantFrom("1e309", "-1e309", "1e400", "-1e400", "9007199254740993", "-9007199254740993", "1.7976931348623157e308", "5e-324", "-0"),
  fc.tuple(fc.bigInt({ min: 10n ** 15n, max: 10n ** 400n }), fc.boolean()).map(([n, negative]) => `${negative ? "-" : ""}${n}`),
);

/** A JSON value of a type other than `kind` (one of the JSON kinds). */
function otherThan(kind: "string" | "number" | "integer" | "array" | "object" | "boolean"): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [fc.constant(null)];
  if (kind !== "boolean") options.push(fc.boolean());
  if (kind !== "number" && kind !== "integer") options.push(fc.double(), fc.integer());
  if (kind === "integer") options.push(fc.double({ noInteger: true, noDefaultInfinity: true, noNaN: true }));
  if (kind !== "string") options.push(anyString, nanLike);
  if (kind !== "array") options.push(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }));
  if (kind !== "object") options.push(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }));
  return fc.oneof(...options);
}

/** Truncated text (never the whole), or text with one character inserted/deleted/replaced to break it. */
function malformed(text: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer({ min: 0, max: text.length - 1 }).map((n) => text.slice(0, n)),
    fc.tuple(fc.integer({ min: 0, max: text.length }), fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "\\", "NaN", "undefined", "'", "\u0000", "//", "/*", "0x1", "\ud800")).map(([i, s]) => text.slice(0, i) + s + text.slice(i)),
  ).filter((t) => {
    try {
      JSON.parse(t);
      return false;
    } catch {
      return true;
    }
  });
}

/** Deep nesting (arrays or objects), optionally unbalanced. */
const deep = fc.tuple(fc.integer({ min: 600, max: 5_000 }), fc.boolean(), fc.boolean()).map(([depth, objects, balanced]) => {
  const open = objects ? '{"a":' : "[";
  const close = objects ? "}" : "]";
  return open.repeat(depth) + "1" + close.repeat(balanced ? depth : depth - 1);
});

/** Bytes that are not UTF-8, inserted into a JSON text at a position after a `:` or `,` or inside a string value. */
const badBytes = fc.constantFrom(
  Buffer.from([0xff]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xe2, 0x82]),
);
function withBadBytes(text: string, positions: number[]): fc.Arbitrary<Buffer> {
  return fc.tuple(fc.constantFrom(...positions), badBytes).map(([i, bytes]) => Buffer.concat([Buffer.from(text.slice(0, i)), bytes, Buffer.from(text.slice(i))]));
}
/** Indexes just after each `:` and `,` of a JSON text without those characters in strings. */
const structural = (text: string) => [...text].flatMap((c, i) => (c === ":" || c === "," ? [i + 1] : []));

/** Content types Fastify cannot parse at all: refused before the route runs (app.ts answers in the interface's form). */
const unparseableContentTypes = ["json", "application/", ""];
const wrongContentType = fc.constantFrom(...unparseableContentTypes, "text/plain", "text/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/jsonp", "application/octet-stream", "json", "application/", "*/*", "application/x-json-stream");

/** Objects whose keys try to reach a prototype. */
const protoKeys = fc.constantFrom(
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"__proto__":{"__proto__":{"polluted":"yes"}}}',
  '[{"__proto__":{"polluted":"yes"}}]',
  '{"prototype":{"polluted":"yes"},"__defineGetter__":1,"hasOwnProperty":"x","toString":1,"valueOf":{}}',
);

function prototypeIntact(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
  expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
}

// ---------------------------------------------------------------------------------------------
// Reports.

const okTimes = { start: "2026-10-01T00:00:00", end: "2026-10-02T00:00:00" };
const baseA = { ...okTimes, metrics: ["revenue", "request"], dimensions: ["date"], ad_format: [1], limit: 100 };
const baseB = { ...okTimes, metrics: ["revenue", "request"], dimensions: ["date"], ad_format: [1], platform: [2], placement_id: ["pl-1"], app_bundle_id: ["com.example.app"], country: ["USA"], limit: 100 };
const reportTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const enumItems = { metrics: ["revenue", "request", "response", "impression", "fill_rate", "render_rate", "ecpm"], dimensionsA: ["date", "date_hour", "platform", "ad_format"], dimensionsB: ["date", "date_hour", "app_bundle_id", "ad_format", "platform", "country", "placement_id", "publisher_id"] };

/** A value guaranteed invalid for `field` of a report request of side A or B. */
function badReportValue(side: "A" | "B", field: string): fc.Arbitrary<unknown> {
  const badArrayOf = (bad: fc.Arbitrary<unknown>, good: fc.Arbitrary<unknown>) =>
    fc.oneof(otherThan("array"), fc.tuple(fc.array(good, { maxLength: 3 }), bad, fc.array(good, { maxLength: 3 })).map(([a, x, b]) => [...a, x, ...b]));
  const notIn = (allowed: string[]) => fc.oneof(otherThan("string"), anyString.filter((s) => !allowed.includes(s)));
  switch (field) {
    case "start":
    case "end":
      return fc.oneof(otherThan("string"), anyString.filter((s) => !reportTime.test(s)), nanLike, fc.constantFrom("2026-13-01T00:00:00", "2026-02-30T00:00:00", "2026-10-01T24:00:00", "2026-10-01 00:00:00", "2026-10-01T00:00:00Z", "2026-10-01", "0000-00-00T00:00:00"));
    case "limit":
      return fc.oneof(otherThan("integer"), fc.integer({ max: 0 }), fc.integer({ min: 50_001 }), fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, 1.5, 50_000.5), nanLike);
    case "metrics":
      return badArrayOf(notIn(enumItems.metrics), fc.constantFrom(...enumItems.metrics));
    case "dimensions": {
      const allowed = side === "A" ? enumItems.dimensionsA : enumItems.dimensionsB;
      return badArrayOf(notIn(allowed), fc.constantFrom(...allowed));
    }
    case "ad_format":
    case "platform": {
      const codes = field === "ad_format" ? [1, 2, 3, 4] : [1, 2, 3];
      if (side === "A" && field === "platform") return fc.jsonValue({ maxDepth: 2 });
      return badArrayOf(fc.oneof(otherThan("integer"), fc.integer().filter((n) => n < 0 || n > 99), fc.constantFrom(0.5, 1e308, -1)), fc.constantFrom(...codes));
    }
    case "country":
      if (side === "A") return fc.jsonValue({ maxDepth: 2 });
      return badArrayOf(fc.oneof(otherThan("string"), anyString.filter((s) => !/^[A-Z]{3}$/.test(s))), fc.constantFrom("USA", "DEU"));
    default: // placement_id, app_bundle_id: not offered by A at all; B needs an array of strings
      if (side === "A") return fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.array(sqlString, { maxLength: 5 }));
      return badArrayOf(otherThan("string"), sqlString);
  }
}

/** A report request body (as text, or bytes) guaranteed to be -2 for side A or B. */
function badReportBody(side: "A" | "B"): fc.Arbitrary<Case> {
  const base = side === "A" ? baseA : baseB;
  const fields = [...Object.keys(baseB)];
  const wrongField = fc.constantFrom(...fields).chain((field) => badReportValue(side, field).map((value) => ({ field, value })));
  const text = json(base);
  return fc.oneof(
    { weight: 3, arbitrary: wrongField.map(({ field, value }) => ({ payload: json({ ...base, [field]: value }), what: `wrong ${field}` })) },
    { weight: 1, arbitrary: fc.tuple(wrongField, fc.constantFrom("start", "end")).map(([{ field, value }, drop]) => ({ payload: json({ ...base, [field]: value, [drop]: undefined }), what: `missing ${drop}` })) },
    { weight: 2, arbitrary: malformed(text).map((payload) => ({ payload, what: "malformed JSON" })) },
    { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 50 }), fc.string({ maxLength: 50, unit: "binary" })).filter((t) => !isObjectJson(t)).map((payload) => ({ payload, what: "garbage / not an object" })) },
    { weight: 1, arbitrary: fc.jsonValue().filter((v) => typeof v !== "object" || v === null || Array.isArray(v)).map((v) => ({ payload: json(v) ?? "null", what: "JSON not an object" })) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom("limit", "ad_format", "start", "end", "metrics"), hugeNumberText).map(([field, number]) => ({
        payload: text.replace(/}$/, `,"${field}":${field === "ad_format" || field === "metrics" ? `[${number}]` : number}}`).replace(`"${field}":`, `"${field}_was":`),
        what: `huge number in ${field}`,
      })),
    },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("limit", "start", "metrics"), fc.constantFrom("NaN", "Infinity", "-Infinity", "undefined", "0x10", "1e", "01")).map(([field, token]) => ({ payload: text.replace(`"${field}":`, `"${field}":${token},"${field}_was":`), what: `bare ${token}` })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("start", "metrics", "limit", "dimensions", "ad_format", "app_bundle_id"), deep).map(([field, nested]) => ({ payload: json({ ...base, [field]: 0 }).replace(`"${field}":0`, `"${field}":${nested}`), what: `deep nesting in ${field}` })) },
    { weight: 1, arbitrary: deep.map((payload) => ({ payload, what: "deep nesting body" })) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.integer({ min: 10_000, max: 100_000 }), fc.constantFrom("start", "metrics", "country", "limit"), fc.boolean()).map(([n, field, asArray]) => ({
        payload: json({ ...base, [field]: asArray ? Array.from({ length: Math.min(n, 10_000) }, (_, i) => (i === 0 ? "bogus-metric x" : "revenue")) : "x".repeat(n) }),
        what: `very long ${asArray ? "array" : "string"} in ${field}`,
      })),
    },
    { weight: 1, arbitrary: fc.tuple(protoKeys, wrongField).map(([proto, { field, value }]) => ({ payload: json({ ...base, [field]: value, polluter: 0 }).replace('"polluter":0', `"__proto__":${proto},"constructor":${proto},"x":${proto}`), what: "prototype keys" })) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...(side === "A" ? ["start", "end", "metrics", "placement_id", "app_bundle_id", "country"] : ["start", "end", "metrics", "dimensions", "country"])), fc.array(sqlString, { minLength: 1, maxLength: 4 })).map(([field, values]) => ({
        payload: json({ ...base, [field]: field === "start" || field === "end" ? values.join("") + "x" : values.map((v) => `${v}-not-${field}`) }),
        what: `SQL and control characters in ${field}`,
      })),
    },
    { weight: 1, arbitrary: withBadBytes(text, structural(text)).map((payload) => ({ payload, what: "non-UTF-8 bytes between tokens" })) },
    { weight: 1, arbitrary: withBadBytes(text, [text.indexOf('"start":"') + 10, text.indexOf('"end":"') + 8]).map((payload) => ({ payload, what: "non-UTF-8 bytes in a date" })) },
    { weight: 1, arbitrary: wrongContentType.map((contentType) => ({ payload: text, contentType, what: `content type ${contentType}` })) },
  );
}

function isObjectJson(text: string): boolean {
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Every report answer: HTTP 200, the envelope, valid against the response schema. */
function envelope(path: string, statusCode: number, text: string): { status: { code: number; msg: string; detail?: string }; data: any } {
  expect(statusCode).toBe(200);
  const body = JSON.parse(text);
  const kind = path === A ? "demand-report-response" : "supply-report-response";
  expect(validators[kind](body).errors).toEqual([]);
  expect(body.status.msg).toBe(reportStatusMessage(body.status.code));
  return body;
}

const headersOf = (who: "demand" | "supply", contentType = "application/json") => ({ "content-type": contentType, "x-userid": creds[who].userid, "x-authorization": creds[who].authorization });

async function postReport(path: string, who: "demand" | "supply", c: Case) {
  const response = await app.inject({ method: "POST", url: path, headers: headersOf(who, c.contentType), payload: c.payload });
  return envelope(path, response.statusCode, response.body);
}

/** Oversized bodies: `min` bytes and more, JSON-shaped (a long string) or not. */
const oversized = fc.tuple(fc.integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT + 200_000 }), fc.boolean()).map(([n, shaped]) => {
  const payload = shaped ? `{"start":"${"x".repeat(n)}"}` : "x".repeat(n);
  return Object.assign(new String(payload), { [fc.toStringMethod]: () => `${payload.length} bytes` });
});

/** Wrong or missing credentials, with any body (precedence: -3 first). */
const wrongCredentials = fc.record({
  userid: fc.option(fc.oneof(sqlString, fc.constant("u_000000000000"), fc.string({ maxLength: 80 })), { nil: undefined }),
  authorization: fc.option(fc.oneof(sqlString, fc.string({ maxLength: 80 })), { nil: undefined }),
  swap: fc.boolean(),
});

describe("POST reports (A and B): bad parameters are -2, in the envelope", SUITE_TIMEOUT, () => {
  // A Content-Type Fastify cannot parse ("", "json", "application/") is refused before the route
  // runs; app.ts' error handler still checks credentials first.
  it("an unparseable Content-Type with wrong credentials is -3 (credentials first)", async () => {
    const response = await app.inject({ method: "POST", url: B, headers: { "content-type": "application/", "x-userid": "nobody", "x-authorization": "wrong" }, payload: json(baseB), remoteAddress: "192.0.2.97" });
    expect(envelope(B, response.statusCode, response.body).status.code).toBe(-3);
  });

  for (const [side, path, who] of [["A", A, "demand"], ["B", B, "supply"]] as const) {
    it(`${side} ${path}: ${RUNS.mixed} generated bad bodies → -2`, async () => {
      await fc.assert(
        fc.asyncProperty(badReportBody(side).map(short), async (c) => {
          const body = await postReport(path, who, c);
          expect(body.status.code, `${c.what}: ${body.status.detail}`).toBe(-2);
          expect(body.data).toBeNull();
          prototypeIntact();
        }),
        { numRuns: RUNS.mixed },
      );
    });

    it(`${side} ${path}: ${RUNS.oversized} oversized bodies (> 1 MiB) → -2`, async () => {
      await fc.assert(
        fc.asyncProperty(oversized, async (payload) => {
          const body = await postReport(path, who, { payload: payload.toString(), what: "oversized" });
          expect(body.status.code).toBe(-2);
        }),
        { numRuns: RUNS.oversized },
      );
    });

    it(`${side} ${path}: ${RUNS.credentials} wrong or missing credentials → -3 whatever the body`, async () => {
      const other = side === "A" ? "supply" : "demand";
      await fc.assert(
        fc.asyncProperty(wrongCredentials, fc.oneof(badReportBody(side), fc.constant<Case>({ payload: json(side === "A" ? baseA : baseB), what: "valid body" })).filter((c) => !unparseableContentTypes.includes(c.contentType ?? "application/json")).map(short), async (cred, c) => {
          const headers: Record<string, string> = { "content-type": c.contentType ?? "application/json" };
          if (cred.swap) Object.assign(headers, { "x-userid": creds[other].userid, "x-authorization": creds[other].authorization });
          else {
            if (cred.userid !== undefined) headers["x-userid"] = cred.userid.replace(/[^\x20-\x7e]/g, "?");
            if (cred.authorization !== undefined) headers["x-authorization"] = cred.authorization.replace(/[^\x20-\x7e]/g, "?");
          }
          // Another address: the throttle of failed credentials must not block the other tests.
          const response = await app.inject({ method: "POST", url: path, headers, payload: c.payload, remoteAddress: "192.0.2.99" });
          const body = envelope(path, response.statusCode, response.body);
          expect(body.status.code, c.what).toBe(-3);
          prototypeIntact();
        }),
        { numRuns: RUNS.credentials },
      );
    });
  }
});

// ---------------------------------------------------------------------------------------------
// GET A: parameters in the query string.

/** encodeURIComponent, with lone surrogates (which it refuses) replaced. */
const enc = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd"));
/** One query parameter guaranteed to make A's GET request -2, as `name=value` pairs. */
const badQueryPart: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.constantFrom("start", "end"), fc.oneof(anyString.filter((s) => !reportTime.test(s)), nanLike, fc.constantFrom("2026-10-01T00:00:00Z", "2026-02-30T00:00:00", "2026-10-01"))).map(([n, v]) => `${n}=${enc(v)}`),
  fc.tuple(fc.constantFrom("start", "end", "limit"), fc.constantFrom("2026-10-01T00:00:00", "5")).map(([n, v]) => `${n}=${enc(v)}&${n}=${enc(v)}`), // a repeated scalar
  fc.oneof(nanLike, hugeNumberText, fc.integer({ max: 0 }).map(String), fc.integer({ min: 50_001 }).map(String), fc.constantFrom("1.5", "1e3", "1,000", "0010x"), anyString.filter((s) => !/^\d{1,15}$/.test(s) || Number(s) < 1 || Number(s) > 50_000)).map((v) => `limit=${enc(v)}`),
  fc.oneof(anyString.filter((s) => !enumItems.metrics.includes(s)), nanLike).map((v) => `metrics[]=revenue&metrics[]=${enc(v)}`),
  fc.oneof(anyString.filter((s) => !enumItems.dimensionsA.includes(s)), fc.constantFrom("app_bundle_id", "placement_id", "publisher_id", "country")).map((v) => `dimensions[]=${enc(v)}`),
  // Not a code once parsed: "01" and "1" are both read as 1 (plain decimal text of 1–15 digits).
  fc.oneof(anyString.filter((s) => !(/^-?\d{1,15}$/.test(s) && [1, 2, 3, 4].includes(Number(s)))), hugeNumberText, nanLike).map((v) => `ad_format[]=${enc(v)}`),
  sqlString.map((v) => `start=${enc(v + "'")}`),
  fc.tuple(fc.constantFrom("start", "metrics[]", "limit"), badBytes).map(([n, bytes]) => `${n}=${[...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("")}`),
  fc.integer({ min: 10_000, max: 50_000 }).map((n) => `start=${"9".repeat(n)}`),
  fc.integer({ min: 1_000, max: 5_000 }).map((n) => `${"metrics[]=revenue&".repeat(n)}metrics[]=nope`),
);
/** Noise that does not make a request valid: unknown parameters, prototype keys, odd encodings. */
const queryNoise = fc.array(
  fc.oneof(
    fc.constantFrom("__proto__[polluted]=yes", "__proto__.polluted=yes", "constructor[prototype][polluted]=yes", "constructor.prototype.polluted=yes", "__proto__=x", "metrics=revenue", "a[b][c][d]=1", "=", "&&", "%", "%zz", "x=%E0%A4%A", "placement_id[]=%27%3B--", "country[]=USA"),
    fc.tuple(fc.string({ maxLength: 8 }), sqlString).map(([k, v]) => `${enc(k || "k")}=${enc(v)}`),
  ),
  { maxLength: 4 },
);

describe("GET A: bad query strings are -2", SUITE_TIMEOUT, () => {
  const auth = () => `x-userid=${enc(creds.demand.userid)}&x-authorization=${enc(creds.demand.authorization)}`;
  const good = `start=${okTimes.start}&end=${okTimes.end}&metrics[]=revenue&ad_format[]=1&limit=10`;

  it("a valid GET is 0 (the baseline the bad ones break)", async () => {
    const response = await app.inject({ method: "GET", url: `${A}?${auth()}&${good}` });
    expect(envelope(A, response.statusCode, response.body).status.code).toBe(0);
  });

  it(`${RUNS.mixed + RUNS.oversized} generated bad query strings → -2`, async () => {
    await fc.assert(
      fc.asyncProperty(badQueryPart, queryNoise, fc.boolean(), async (bad, noise, keepGood) => {
        const parts = [auth(), ...(keepGood ? [good] : []), ...noise, bad];
        // A good start/end after a bad one would make a repeated scalar: still -2, and intended.
        const response = await app.inject({ method: "GET", url: `${A}?${parts.join("&")}` });
        const body = envelope(A, response.statusCode, response.body);
        expect(body.status.code, `${bad.slice(0, 200)}: ${body.status.detail}`).toBe(-2);
        prototypeIntact();
      }),
      { numRuns: RUNS.mixed + RUNS.oversized },
    );
  });

  it(`${RUNS.credentials} wrong or missing credentials → -3`, async () => {
    await fc.assert(
      fc.asyncProperty(wrongCredentials, fc.oneof(badQueryPart, fc.constant(good)), async (cred, rest) => {
        const parts = cred.swap
          ? [`x-userid=${enc(creds.supply.userid)}&x-authorization=${enc(creds.supply.authorization)}`]
          : [cred.userid === undefined ? "" : `x-userid=${enc(cred.userid)}`, cred.authorization === undefined ? "" : `x-authorization=${enc(cred.authorization)}`];
        const response = await app.inject({ method: "GET", url: `${A}?${[...parts, rest].join("&")}`, remoteAddress: "192.0.2.98" });
        expect(envelope(A, response.statusCode, response.body).status.code).toBe(-3);
        prototypeIntact();
      }),
      { numRuns: RUNS.credentials },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// B's string filters stay parameterised.

describe("B: hostile filter values are literal values", SUITE_TIMEOUT, () => {
  const ofPub1 = facts.filter((f): f is Extract<Fact, { side: "supply" }> => f.side === "supply" && f.publisher_id === "pub-1");
  const filterValue = fc.oneof(fc.constantFrom(...nasty), sqlString, fc.constantFrom(...nasty).chain((v) => sqlString.map((s) => v + s)));

  it(`${RUNS.filters} filter sets → exactly the rows of those literal values of the account's publisher`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(filterValue, { minLength: 1, maxLength: 4 }), fc.option(fc.uniqueArray(filterValue, { minLength: 1, maxLength: 3 }), { nil: undefined }), async (bundles, placements) => {
        const request = { ...okTimes, metrics: ["request"], dimensions: ["app_bundle_id"], app_bundle_id: bundles, ...(placements ? { placement_id: placements } : {}) };
        const body = await postReport(B, "supply", { payload: json(request), what: "filters" });
        expect(body.status.code, body.status.detail).toBe(0);
        const expected = new Map<string, number>();
        for (const f of ofPub1) {
          if (!bundles.includes(f.app_bundle_id) || (placements && !placements.includes(f.placement_id))) continue;
          expected.set(f.app_bundle_id, (expected.get(f.app_bundle_id) ?? 0) + f.request);
        }
        const got = new Map<string, number>((body.data.data as { app_bundle_id: string; request: number }[]).map((row) => [row.app_bundle_id, row.request]));
        expect(got).toEqual(expected);
        prototypeIntact();
      }),
      { numRuns: RUNS.filters },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The auction.

const baseRequest = {
  id: "req-1",
  tmax: 100,
  imp: [{ id: "1", tagid: "placement-1", bidfloor: 0.5, banner: { w: 320, h: 50 } }],
  app: { id: "app-1", bundle: "com.example.game", publisher: { id: "pub-1" } },
  device: { os: "Android", geo: { country: "USA" }, ip: "192.0.2.1" },
};
type Kind = "string" | "number" | "integer" | "array" | "object";
/** Every path of the base request with the kind the schema wants there. */
const requestPaths: [string[], Kind][] = [
  [[], "object"],
  [["id"], "string"],
  [["tmax"], "integer"],
  [["imp"], "array"],
  [["imp", "0"], "object"],
  [["imp", "0", "id"], "string"],
  [["imp", "0", "tagid"], "string"],
  [["imp", "0", "bidfloor"], "number"],
  [["imp", "0", "banner"], "object"],
  [["imp", "0", "banner", "w"], "integer"],
  [["imp", "0", "banner", "h"], "integer"],
  [["app"], "object"],
  [["app", "id"], "string"],
  [["app", "bundle"], "string"],
  [["app", "publisher"], "object"],
  [["app", "publisher", "id"], "string"],
  [["device"], "object"],
  [["device", "os"], "string"],
  [["device", "geo"], "object"],
  [["device", "geo", "country"], "string"],
  [["device", "ip"], "string"],
];
const numericPaths = requestPaths.filter(([, k]) => k === "number" || k === "integer").map(([p]) => p);
const stringPaths = requestPaths.filter(([, k]) => k === "string").map(([p]) => p);
const containerPaths = requestPaths.filter(([p, k]) => p.length > 0 && (k === "object" || k === "array")).map(([p]) => p);

function setAt(path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: any = structuredClone(baseRequest);
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path[path.length - 1]] = value;
  return copy;
}
/** The base request's text with the value at `path` written as raw JSON text. */
function setRawAt(path: string[], raw: string): string {
  const marker = "\u0000raw\u0000";
  return json(setAt(path, marker)).replace(json(marker), raw);
}

const requestText = json(baseRequest);
/**
 * The base request with a tmax a paused, loaded machine cannot use up before the auction runs:
 * with tmax 100 a 70 ms stall between arrival and validation was shed as too late (204
 * `overloaded`, no bidder called), which is right for the exchange but not what these tests ask.
 */
const answeredText = json({ ...baseRequest, tmax: 1_000 });
const badAuctionBody: fc.Arbitrary<Case> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...requestPaths).chain(([path, kind]) => otherThan(kind).map((value) => ({ payload: json(setAt(path, value)) ?? "null", what: `wrong type at /${path.join("/")}` }))) },
  { weight: 1, arbitrary: fc.constantFrom<[string[], string]>([["id"], ""], [["imp"], ""], [["imp", "0", "id"], ""], [["imp", "0", "banner"], ""]).map(([path]) => ({ payload: json(setAt(path, undefined)), what: `missing /${path.join("/")}` })) },
  { weight: 1, arbitrary: fc.constantFrom("[]", "{}", '{"imp":[]}', '{"id":"x","imp":[]}').map((payload) => ({ payload, what: "empty" })) },
  { weight: 3, arbitrary: malformed(requestText).map((payload) => ({ payload, what: "malformed JSON" })) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 50 }), fc.string({ maxLength: 50, unit: "binary" })).filter((t) => !isObjectJson(t)).map((payload) => ({ payload, what: "garbage" })) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.tuple(fc.constantFrom(...stringPaths), hugeNumberText).map(([path, n]) => ({ payload: setRawAt(path, n), what: `huge number ${n.slice(0, 30)} at /${path.join("/")}` })),
      fc.tuple(fc.constantFrom(...numericPaths), fc.constantFrom("1e309", "-1e309", "1e400", "-1e400"), fc.bigInt({ min: 10n ** 310n, max: 10n ** 400n })).map(([path, inf, big]) => ({ payload: setRawAt(path, big % 2n === 0n ? inf : String(big)), what: `infinite number at /${path.join("/")}` })),
      fc.tuple(fc.constantFrom(...numericPaths.filter((p) => p.join() !== "tmax")), fc.bigInt({ min: -(10n ** 40n), max: -1n })).map(([path, n]) => ({ payload: setRawAt(path, String(n)), what: `huge negative at /${path.join("/")}` })),
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...numericPaths), nanLike).map(([path, s]) => ({ payload: json(setAt(path, s)), what: `NaN-like string ${JSON.stringify(s)} at /${path.join("/")}` })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...numericPaths), fc.constantFrom("NaN", "Infinity", "-Infinity", "undefined", "0x10", "01", "+1", ".5")).map(([path, t]) => ({ payload: setRawAt(path, t), what: `bare ${t}` })) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...containerPaths, ...stringPaths), deep, fc.boolean()).map(([path, nested, big]) => ({ payload: setRawAt(path, big ? nested.replace("1", "123456789012345678901234567890") : nested), what: `deep nesting at /${path.join("/")}` })) },
  { weight: 1, arbitrary: deep.map((payload) => ({ payload, what: "deep nesting body" })) },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.integer({ min: 1_000, max: 3_000 }).map((n) => ({ payload: json({ ...baseRequest, imp: [...Array.from({ length: n }, (_, i) => ({ ...baseRequest.imp[0], id: String(i) })), { id: "last" }] }), what: `${n} imps, the last without a format` })),
      fc.tuple(fc.integer({ min: 10_000, max: 100_000 }), fc.constantFrom(...requestPaths.filter(([p, k]) => p.length > 0 && k !== "string").map(([p]) => p))).map(([n, path]) => ({ payload: json(setAt(path, "x".repeat(n))), what: `long string at /${path.join("/")}` })),
      fc.integer({ min: 10_000, max: 100_000 }).map((n) => ({ payload: json({ ...baseRequest, id: "x".repeat(n), imp: undefined }), what: "long id, no imp" })),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(protoKeys, fc.constantFrom([] as string[], ["imp", "0"], ["app"], ["device", "geo"], ["ext"], ["imp", "0", "ext"])).map(([proto, at]) => {
      const request: any = structuredClone(baseRequest);
      delete request.id; // invalid: the property is about the keys, the answer must still be 400
      let holder = request;
      for (const key of at) holder = holder[key] ??= {};
      holder.polluter = 0;
      return { payload: json(request).replace('"polluter":0', `"__proto__":${proto},"constructor":${proto},"p":${proto}`), what: `prototype keys at /${at.join("/")}` };
    }),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...stringPaths.filter((p) => p.length > 1 || p[0] === "id")), sqlString).map(([path, s]) => ({ payload: json({ ...(setAt(path, s) as object), imp: [{ id: s }] }), what: "control characters, imp without a format" })) },
  { weight: 1, arbitrary: withBadBytes(requestText, structural(requestText)).map((payload) => ({ payload, what: "non-UTF-8 bytes between tokens" })) },
  { weight: 1, arbitrary: wrongContentType.map((contentType) => ({ payload: requestText, contentType, what: `content type ${contentType}` })) },
);

describe("POST /openrtb2/auction: bad requests are 400 in the auction's own form", SUITE_TIMEOUT, () => {
  it("a valid request is answered (baseline; the fake bidder passes)", async () => {
    const response = await app.inject({ method: "POST", url: AUCTION, headers: { "content-type": "application/json" }, payload: answeredText });
    expect(response.statusCode).toBe(204);
    expect(response.headers["x-adxkit-no-bid"]).toBeUndefined();
    expect(bidderCalls).toBe(1);
  });

  it(`${RUNS.mixed + RUNS.credentials + RUNS.filters} generated bad requests → 400 {errors}, no bidder called`, async () => {
    const before = bidderCalls;
    await fc.assert(
      fc.asyncProperty(badAuctionBody.map(short), async (c) => {
        const response = await app.inject({ method: "POST", url: AUCTION, headers: { "content-type": c.contentType ?? "application/json" }, payload: c.payload });
        // Even a content type Fastify cannot parse ("application/", "json") is 400 in the auction's form.
        const expected = 400;
        expect(response.statusCode, `${c.what}: ${response.body.slice(0, 300)}`).toBe(expected);
        const body = JSON.parse(response.body);
        expect(Array.isArray(body.errors) && body.errors.length > 0, c.what).toBe(true);
        for (const e of body.errors) expect(Object.keys(e).sort()).toEqual(["message", "path", "rule"]);
        prototypeIntact();
      }),
      { numRuns: RUNS.mixed + RUNS.credentials + RUNS.filters },
    );
    expect(bidderCalls).toBe(before);
    expect(exchange.stats().invalidRequests).toBeGreaterThanOrEqual(RUNS.mixed);
  });

  it(`${RUNS.oversized} oversized bodies → 413 {errors:[{rule:"body-too-large"}]}`, async () => {
    await fc.assert(
      fc.asyncProperty(oversized, async (payload) => {
        const response = await app.inject({ method: "POST", url: AUCTION, headers: { "content-type": "application/json" }, payload: payload.toString() });
        expect(response.statusCode).toBe(413);
        expect(JSON.parse(response.body).errors).toEqual([{ path: "", rule: "body-too-large", message: expect.any(String) }]);
      }),
      { numRuns: RUNS.oversized },
    );
  });

  it("a valid request with prototype keys or nesting up to 512 levels in all (ext at level 2) is answered; deeper is 400 (rule json), never a 500", async () => {
    const send = (ext: string) => app.inject({ method: "POST", url: AUCTION, headers: { "content-type": "application/json" }, payload: setRawAt(["ext"], ext) });
    const nest = (depth: number, inner: string) => `{"deep":${"[".repeat(depth - 1)}${inner}${"]".repeat(depth - 1)}}`;
    for (const ext of ['{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}', nest(511, "1"), nest(511, "123456789012345678901234567890")]) {
      const response = await send(ext);
      expect(response.statusCode, response.body).toBe(204);
      prototypeIntact();
    }
    for (const ext of [nest(512, "1"), nest(5_000, "123456789012345678901234567890"), nest(100_000, "1")]) {
      const response = await send(ext);
      expect(response.statusCode, response.body).toBe(400);
      expect(JSON.parse(response.body).errors).toEqual([{ path: "", rule: "json", message: expect.stringContaining("deeper than 512") }]);
    }
  });

  it("still answers after everything above", async () => {
    const calls = bidderCalls;
    const response = await app.inject({ method: "POST", url: AUCTION, headers: { "content-type": "application/json" }, payload: answeredText });
    expect(response.statusCode).toBe(204);
    expect(bidderCalls).toBe(calls + 1);
    const report = await postReport(B, "supply", { payload: json(baseB), what: "valid" });
    expect(report.status.code).toBe(0);
  });
});

describe("GET /events/billing: bad tokens are 403 in the exchange's own form, and count nothing", SUITE_TIMEOUT, () => {
  // Claims of the first token format (the key's dimensions as claims of their own), which the
  // exchange still honours as fact-key version 1: each field can be broken on its own here.
  const claims = { jti: "t-1", aid: "a-1", iid: "1", bdr: "dsp-1", seat: "seat-1", px: 1_510_000, cur: "USD", dh: "2026-11-23T10:00:00", pub: "pub-1", app: "com.example", plc: "p-1", fmt: 1, plt: 2, cty: "USA", exp: Date.now() + 3_600_000 } as unknown as BillingClaims;
  /** Sealed as tokens of that format were: the claims as a JSON object (sealBillingToken now writes them by position). */
  const sealAsWritten = (c: unknown, ring: SealKeyRing = BILLING_KEYS) => ring.seal(Buffer.from(JSON.stringify(c)));
  const genuine = sealAsWritten(claims);
  const [keyId, sealed] = genuine.split(".");
  const b64 = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
  /** Every byte percent-encoded (encodeURIComponent refuses lone surrogates, which the generators make). */
  const percent = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
  const flip = (text: string, i: number) => text.slice(0, i) + (text[i] === "A" ? "B" : "A") + text.slice(i + 1);
  /** Claims with one field of the wrong type or value (as a key holder could mint by mistake). */
  const badClaims = fc.oneof(
    fc.constantFrom(...Object.keys(claims)).chain((key) =>
      (key === "exp" ? otherThan("number") : ["px", "fmt", "plt"].includes(key) ? otherThan("integer") : otherThan("string")).map((value) => ({ ...claims, [key]: value })),
    ),
    fc.constantFrom({ ...claims, px: -1 }, { ...claims, px: 1.5 }, { ...claims, fmt: -2 }, { ...claims, dh: "2026-11-23T10:30:00" }, { ...claims, dh: "yesterday" }, { ...claims, exp: "never" }, [claims], null, "claims", 42),
    fc.constantFrom("jti", "px", "dh", "exp", "bdr").map((key) => Object.fromEntries(Object.entries(claims).filter(([k]) => k !== key))),
    // The current format: an auction key of a newer version, of the wrong length, or with a value of the wrong type.
    fc.constantFrom([2, "2026-11-23T10:00:00", "pub-1", "com.example", "p-1", 1, 2, "USA", "dsp-1"], [1, "2026-11-23T10:00:00"], [1, "2026-11-23T10:00:00", "pub-1", "com.example", "p-1", "1", 2, "USA", "dsp-1"], "k").map((k) => ({
      jti: "t-2", aid: "a-1", iid: "1", seat: "seat-1", px: 1, cur: "USD", k, exp: Date.now() + 3_600_000,
    })),
  );
  /** A token query (the value as sent, URL-encoded where it needs to be), and what it is. */
  const badQuery: fc.Arbitrary<{ query: string; what: string; expired?: boolean }> = fc.oneof(
    anyString.map((t) => ({ query: `token=${percent(t)}`, what: "random text" })),
    fc.tuple(fc.base64String({ maxLength: 80 }), fc.base64String({ maxLength: 60 })).map(([a, b]) => ({ query: `token=${percent(`${a}.${b}`)}`, what: "base64 junk" })),
    fc.nat(genuine.length - 1).filter((i) => genuine[i] !== ".").map((i) => ({ query: `token=${flip(genuine, i)}`, what: `genuine token, character ${i} changed` })),
    fc.integer({ min: 0, max: 5_000_000_000 }).map((px) => ({ query: `token=${keyId}.${b64({ ...claims, px })}`, what: "readable claims under the genuine key id" })),
    fc.string({ minLength: 8, maxLength: 40 }).map((key) => ({ query: `token=${sealAsWritten(claims, new SealKeyRing([sealKey(key)]))}`, what: "sealed with another key" })),
    // Whatever JSON is sealed: a well-sealed token whose claims are bad.
    badClaims.map((c) => ({ query: `token=${sealAsWritten(c)}`, what: `well sealed, bad claims ${JSON.stringify(c)?.slice(0, 80)}` })),
    fc.integer({ min: 0, max: Date.now() }).map((exp) => ({ query: `token=${sealAsWritten({ ...claims, exp })}`, what: "expired", expired: true })),
    fc.constantFrom(
      { query: "", what: "no token" },
      { query: "token=", what: "empty token" },
      { query: `token=${genuine}&token=${genuine}`, what: "token given twice" },
      { query: `token[]=${genuine}`, what: "token as an array parameter" },
      { query: `token=${sealed}`, what: "no key id" },
      { query: `token=${keyId}.${sealed}.${sealed}`, what: "two dots" },
      { query: `token=%FF%FE${keyId}.${sealed}`, what: "non-UTF-8 bytes" },
      { query: `token=${keyId}.${"A".repeat(15_000)}`, what: "a 15 KB token" },
      { query: `token=${genuine}%00`, what: "a NUL after the token" },
      { query: "__proto__[token]=1&constructor[prototype][token]=1", what: "prototype keys" },
    ),
  );
  it(`${RUNS.billing} generated bad billing calls → 403 billing-token-invalid or -expired; nothing recorded; never a 5xx`, async () => {
    const before = exchange.stats().billing.recorded;
    await fc.assert(
      fc.asyncProperty(badQuery, async ({ query, what, expired }) => {
        const response = await app.inject({ method: "GET", url: `/events/billing?${query}` });
        expect(response.statusCode, `${what}: ${response.body.slice(0, 200)}`).toBe(403);
        const errors = JSON.parse(response.body).errors;
        expect(errors, what).toHaveLength(1);
        expect(errors[0].rule, what).toBe(expired ? "billing-token-expired" : "billing-token-invalid");
        expect(errors[0].path).toBe("/token");
        prototypeIntact();
      }),
      { numRuns: RUNS.billing },
    );
    expect(exchange.stats().billing.recorded).toBe(before);
  });

  it("the genuine token still counts, once", async () => {
    const before = exchange.stats().billing;
    expect((await app.inject({ url: `/events/billing?token=${genuine}` })).statusCode).toBe(204);
    expect((await app.inject({ url: `/events/billing?token=${genuine}` })).statusCode).toBe(204);
    const after = exchange.stats().billing;
    expect(after.recorded - before.recorded).toBe(1);
    expect(after.duplicate - before.duplicate).toBe(1);
  });
});

