// Token format 3 (the claims in binary, service/auction/billing-token.ts) against node:crypto:
// its bytes as node:crypto's own decipher reads them (test/fixtures/fact-key/token-format-3.json),
// the JSON formats before it still counting until they expire, a format this build does not know
// refused saying so, and random claims round-tripping while any flipped bit is refused.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { decodeAuctionKey, type AuctionKey } from "@adxkit/bindings/reports";
import { newTokenId, openBillingToken, sealBillingToken, type BillingClaims } from "../../service/auction/billing-token.js";
import { sealKey, SealKeyRing } from "../../service/auction/token-seal.js";

const key = sealKey("secret-1");
const ring = new SealKeyRing([key]);
const aad = Buffer.from(key.id, "latin1");
const known: { claims: BillingClaims; plaintext: string } = JSON.parse(readFileSync(new URL("../fixtures/fact-key/token-format-3.json", import.meta.url), "utf8"));

/** The plaintext of a token, opened by node:crypto's AES-256-GCM decipher (throws unless it authenticates). */
function plaintextByNode(token: string): Buffer {
  const body = Buffer.from(token.split(".")[1], "base64url");
  const decipher = createDecipheriv("aes-256-gcm", key.key, body.subarray(0, 12));
  decipher.setAAD(aad);
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]);
}

/** A token of `plaintext` sealed by node:crypto's own cipher, as any build would seal it. */
function sealedByNode(plaintext: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key.key, iv).setAAD(aad);
  const sealed = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${key.id}.${sealed.toString("base64url")}`;
}

const now = 1_000;

describe("token format 3", () => {
  test("known answer: the claims' bytes, as node:crypto opens them", () => {
    const token = sealBillingToken(known.claims, ring);
    expect(plaintextByNode(token).toString("hex")).toBe(known.plaintext);
    // And bytes sealed by node:crypto open to the claims.
    expect(openBillingToken(sealedByNode(Buffer.from(known.plaintext, "hex")), ring, now)).toMatchObject({ ok: true, claims: known.claims });
  });

  test("a third shorter than the same claims as JSON (format 2)", () => {
    const json = JSON.stringify([2, ...["jti", "aid", "iid", "seat", "px", "cur", "burl", "k", "exp"].map((name) => known.claims[name as keyof BillingClaims])]);
    expect(plaintextByNode(sealBillingToken(known.claims, ring)).length).toBeLessThan(json.length * 0.7);
  });

  test("tokens of the JSON formats sealed before it (2: positional; 1: by name) still count until they expire", () => {
    const c = known.claims;
    const positional = JSON.stringify([2, c.jti, c.aid, c.iid, c.seat, c.px, c.cur, c.burl, c.k, c.exp]);
    for (const text of [positional, JSON.stringify(c)]) {
      const token = sealedByNode(Buffer.from(text));
      expect(openBillingToken(token, ring, now)).toMatchObject({ ok: true, claims: c });
      expect(openBillingToken(token, ring, c.exp)).toMatchObject({ ok: false, rule: "billing-token-expired" });
    }
  });

  test.each([
    ["a format newer than this build reads", "04", "token format 4 is not one this adxkit reads"],
    ["an empty payload", "", "token format (empty) is not one this adxkit reads"],
    ["format 3 cut short", known.plaintext.slice(0, 40), "token payload is incomplete"],
    ["format 3 with a byte more", `${known.plaintext}00`, "token payload is incomplete"],
    ["format 3 with an auction key of a newer fact-key version", known.plaintext.replace("019afb1d", "099afb1d"), "fact-key version 9 is newer"],
    ["format 3 with a burl flag neither 0 nor 1", known.plaintext.replace("555344011d", "555344021d"), "token payload is incomplete"],
  ])("refused, saying why: %s", (_, hex, message) => {
    expect(openBillingToken(sealedByNode(Buffer.from(hex, "hex")), ring, now)).toEqual({ ok: false, rule: "billing-token-invalid", message: expect.stringContaining(message) });
  });

  test("claims longer than the writer's buffer (it grows, and is sealed where it is) and non-ASCII texts open the same", () => {
    for (const burl of [`https://b.example/${"x".repeat(3000)}`, "https://b.example/é日本\u{1F600}", known.claims.burl!]) {
      const c = { ...known.claims, burl, seat: "sé" };
      const token = sealBillingToken(c, ring);
      expect(plaintextByNode(token)[0]).toBe(3);
      expect(openBillingToken(token, ring, now)).toMatchObject({ ok: true, claims: c });
    }
  });

  test("claims the binary form cannot hold (a lone surrogate) are sealed as JSON, and open the same", () => {
    const c = { ...known.claims, aid: "a\uD800b" };
    const token = sealBillingToken(c, ring);
    expect(plaintextByNode(token)[0]).toBe(0x5b);
    expect(openBillingToken(token, ring, now)).toMatchObject({ ok: true, claims: c });
  });
});

describe("seal and open, random claims", () => {
  const text = fc.string({ unit: "grapheme", maxLength: 20 });
  const hour = fc.integer({ min: 0, max: 70_000_000 }).map((h) => new Date(h * 3_600_000).toISOString().slice(0, 13) + ":00:00");
  const code = fc.integer({ min: 0, max: 2_147_483_647 });
  const auctionKey = fc.record({ date_hour: hour, publisher_id: text, app_bundle_id: text, placement_id: text, ad_format: code, platform: code, country: fc.constantFrom("", "USA"), bidder_id: text });
  const claims = fc.record(
    { jti: fc.constant(newTokenId()), aid: text, iid: text, seat: text, px: fc.maxSafeNat(), cur: fc.constantFrom("USD", "EUR"), burl: fc.webUrl(), k: auctionKey.map((k) => [1, ...Object.values(k)]), exp: fc.integer({ min: now + 1, max: 2 ** 45 }) },
    { requiredKeys: ["jti", "aid", "iid", "seat", "px", "cur", "k", "exp"] },
  );

  test("round trip: the same claims and key; any flipped bit of the token's body is refused", () => {
    fc.assert(
      fc.property(claims, fc.nat(), (c, bit) => {
        const token = sealBillingToken(c as BillingClaims, ring);
        expect(plaintextByNode(token)[0]).toBe(3);
        const opened = openBillingToken(token, ring, now);
        expect(opened).toEqual({ ok: true, claims: c, key: decodeAuctionKey(c.k) as AuctionKey });
        const body = Buffer.from(token.split(".")[1], "base64url");
        body[(bit >> 3) % body.length] ^= 1 << (bit & 7);
        expect(openBillingToken(`${key.id}.${body.toString("base64url")}`, ring, now)).toMatchObject({ ok: false, rule: "billing-token-invalid", message: "token does not authenticate" });
      }),
      { numRuns: 60 },
    );
  });
});
