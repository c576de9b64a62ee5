/**
 * Bad report requests, generated (fast-check), thrown at A (GET and POST) and B (POST) through
 * Fastify inject: always HTTP 200 and the envelope; -2 for bad parameters, -3 for wrong
 * credentials (before anything else); no prototype polluted. B's string filters (placement_id,
 * app_bundle_id) with quotes, semicolons, SQL wildcards and control characters return the rows of
 * exactly those literal values (or none), never an error nor another publisher's rows.
 * The server: ./bad-input/server.ts; the generators: ./bad-input/arbitraries.ts.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { AdFormat, Platform } from "@adxkit/bindings";
import { reportLimits, reportModel } from "@adxkit/bindings/reports";
import type { Fact } from "../../service/store/store.js";
import { type Case, anyString, badBytes, deep, hugeNumberText, isObjectJson, json, malformed, nanLike, otherThan, oversized, protoKeys, prototypeIntact, short, sqlString, structural, unparseableContentTypes, withBadBytes, wrongContentType, wrongCredentials } from "./bad-input/arbitraries.js";
import { A, B, RUNS, SUITE_TIMEOUT, envelope, facts, nasty, postReport, useBadInputServer } from "./bad-input/server.js";

const server = useBadInputServer();

const okTimes = { start: "2026-10-01T00:00:00", end: "2026-10-02T00:00:00" };
const baseA = { ...okTimes, metrics: ["revenue", "request"], dimensions: ["date"], ad_format: [1], limit: 100 };
const baseB = { ...okTimes, metrics: ["revenue", "request"], dimensions: ["date"], ad_format: [1], platform: [2], placement_id: ["pl-1"], app_bundle_id: ["com.example.app"], country: ["USA"], limit: 100 };
const reportTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
/** What the spec offers: every other value of these is bad. */
const enumItems = {
  metrics: reportModel.metrics.map((m) => m.name as string),
  dimensionsA: [...reportModel.sides.demand.dimensions] as string[],
  dimensionsB: [...reportModel.sides.supply.dimensions] as string[],
  codes: { ad_format: AdFormat.values.map((v): number => v.code), platform: Platform.values.map((v): number => v.code) },
};
const { limitMax } = reportLimits;

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
      return fc.oneof(otherThan("integer"), fc.integer({ max: 0 }), fc.integer({ min: limitMax + 1 }), fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, 1.5, limitMax + 0.5), nanLike);
    case "metrics":
      return badArrayOf(notIn(enumItems.metrics), fc.constantFrom(...enumItems.metrics));
    case "dimensions": {
      const allowed = side === "A" ? enumItems.dimensionsA : enumItems.dimensionsB;
      return badArrayOf(notIn(allowed), fc.constantFrom(...allowed));
    }
    case "ad_format":
    case "platform": {
      const codes = enumItems.codes[field];
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

describe("POST reports (A and B): bad parameters are -2, in the envelope", SUITE_TIMEOUT, () => {
  // A Content-Type Fastify cannot parse ("", "json", "application/") is refused before the route
  // runs; app.ts' error handler still checks credentials first.
  it("an unparseable Content-Type with wrong credentials is -3 (credentials first)", async () => {
    const response = await server.app.inject({ method: "POST", url: B, headers: { "content-type": "application/", "x-userid": "nobody", "x-authorization": "wrong" }, payload: json(baseB), remoteAddress: "192.0.2.97" });
    expect(envelope(B, response.statusCode, response.body).status.code).toBe(-3);
  });

  for (const [side, path, who] of [["A", A, "demand"], ["B", B, "supply"]] as const) {
    it(`${side} ${path}: ${RUNS.mixed} generated bad bodies → -2`, async () => {
      await fc.assert(
        fc.asyncProperty(badReportBody(side).map(short), async (c) => {
          const body = await postReport(server, path, who, c);
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
          const body = await postReport(server, path, who, { payload: payload.toString(), what: "oversized" });
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
          if (cred.swap) Object.assign(headers, { "x-userid": server.creds[other].userid, "x-authorization": server.creds[other].authorization });
          else {
            if (cred.userid !== undefined) headers["x-userid"] = cred.userid.replace(/[^\x20-\x7e]/g, "?");
            if (cred.authorization !== undefined) headers["x-authorization"] = cred.authorization.replace(/[^\x20-\x7e]/g, "?");
          }
          // Another address: the throttle of failed credentials must not block the other tests.
          const response = await server.app.inject({ method: "POST", url: path, headers, payload: c.payload, remoteAddress: "192.0.2.99" });
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
  fc.oneof(nanLike, hugeNumberText, fc.integer({ max: 0 }).map(String), fc.integer({ min: limitMax + 1 }).map(String), fc.constantFrom("1.5", "1e3", "1,000", "0010x"), anyString.filter((s) => !/^\d{1,15}$/.test(s) || Number(s) < 1 || Number(s) > limitMax)).map((v) => `limit=${enc(v)}`),
  fc.oneof(anyString.filter((s) => !enumItems.metrics.includes(s)), nanLike).map((v) => `metrics[]=revenue&metrics[]=${enc(v)}`),
  fc.oneof(anyString.filter((s) => !enumItems.dimensionsA.includes(s)), fc.constantFrom("app_bundle_id", "placement_id", "publisher_id", "country")).map((v) => `dimensions[]=${enc(v)}`),
  // Not a code once parsed: "01" and "1" are both read as 1 (plain decimal text of 1–15 digits).
  fc.oneof(anyString.filter((s) => !(/^-?\d{1,15}$/.test(s) && enumItems.codes.ad_format.includes(Number(s)))), hugeNumberText, nanLike).map((v) => `ad_format[]=${enc(v)}`),
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
  const auth = () => `x-userid=${enc(server.creds.demand.userid)}&x-authorization=${enc(server.creds.demand.authorization)}`;
  const good = `start=${okTimes.start}&end=${okTimes.end}&metrics[]=revenue&ad_format[]=1&limit=10`;

  it("a valid GET is 0 (the baseline the bad ones break)", async () => {
    const response = await server.app.inject({ method: "GET", url: `${A}?${auth()}&${good}` });
    expect(envelope(A, response.statusCode, response.body).status.code).toBe(0);
  });

  it(`${RUNS.mixed + RUNS.oversized} generated bad query strings → -2`, async () => {
    await fc.assert(
      fc.asyncProperty(badQueryPart, queryNoise, fc.boolean(), async (bad, noise, keepGood) => {
        const parts = [auth(), ...(keepGood ? [good] : []), ...noise, bad];
        // A good start/end after a bad one would make a repeated scalar: still -2, and intended.
        const response = await server.app.inject({ method: "GET", url: `${A}?${parts.join("&")}` });
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
          ? [`x-userid=${enc(server.creds.supply.userid)}&x-authorization=${enc(server.creds.supply.authorization)}`]
          : [cred.userid === undefined ? "" : `x-userid=${enc(cred.userid)}`, cred.authorization === undefined ? "" : `x-authorization=${enc(cred.authorization)}`];
        const response = await server.app.inject({ method: "GET", url: `${A}?${[...parts, rest].join("&")}`, remoteAddress: "192.0.2.98" });
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
        const body = await postReport(server, B, "supply", { payload: json(request), what: "filters" });
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
