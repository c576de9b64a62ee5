/**
 * Bad billing calls, generated (fast-check), thrown at GET /events/billing through Fastify inject:
 * 403 in the exchange's own form (billing-token-invalid or -expired), nothing recorded, never a
 * 5xx; the genuine token still counts once.
 * The server: ./bad-input/server.ts; the generators: ./bad-input/arbitraries.ts.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { BillingClaims } from "../../service/auction/billing-token.js";
import { SealKeyRing, sealKey } from "../../service/auction/token-seal.js";
import { anyString, otherThan, prototypeIntact } from "./bad-input/arbitraries.js";
import { BILLING_KEYS, RUNS, SUITE_TIMEOUT, useBadInputServer } from "./bad-input/server.js";

const server = useBadInputServer();

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
    const before = server.exchange.stats().billing.recorded;
    await fc.assert(
      fc.asyncProperty(badQuery, async ({ query, what, expired }) => {
        const response = await server.app.inject({ method: "GET", url: `/events/billing?${query}` });
        expect(response.statusCode, `${what}: ${response.body.slice(0, 200)}`).toBe(403);
        const errors = JSON.parse(response.body).errors;
        expect(errors, what).toHaveLength(1);
        expect(errors[0].rule, what).toBe(expired ? "billing-token-expired" : "billing-token-invalid");
        expect(errors[0].path).toBe("/token");
        prototypeIntact();
      }),
      { numRuns: RUNS.billing },
    );
    expect(server.exchange.stats().billing.recorded).toBe(before);
  });

  it("the genuine token still counts, once", async () => {
    const before = server.exchange.stats().billing;
    expect((await server.app.inject({ url: `/events/billing?token=${genuine}` })).statusCode).toBe(204);
    expect((await server.app.inject({ url: `/events/billing?token=${genuine}` })).statusCode).toBe(204);
    const after = server.exchange.stats().billing;
    expect(after.recorded - before.recorded).toBe(1);
    expect(after.duplicate - before.duplicate).toBe(1);
  });
});

