// The billing token's formats come from the spec (x-adxkit-token-formats, generated as
// `billingTokenFormats`): a format the spec no longer opens is refused by name like an unknown
// one, while those still opened count. Here the spec's list is replaced by one without format 1,
// as a spec retiring it (its tokens expired) would generate.
import { readFileSync } from "node:fs";
import { describe, expect, test, vi } from "vitest";
import type { BillingClaims } from "../../service/auction/billing-token.js";

vi.mock("@adxkit/bindings", async (importOriginal) => ({
  ...(await importOriginal<typeof import("@adxkit/bindings")>()),
  billingTokenFormats: { written: 3, opened: [2, 3] },
}));

const { openBillingToken, sealBillingToken } = await import("../../service/auction/billing-token.js");
const { sealKey, SealKeyRing } = await import("../../service/auction/token-seal.js");

const ring = new SealKeyRing([sealKey("secret-1")]);
const known: { claims: BillingClaims } = JSON.parse(readFileSync(new URL("../fixtures/fact-key/token-format-3.json", import.meta.url), "utf8"));
const c = known.claims;
const now = 1_000;

describe("a token format the spec no longer opens", () => {
  test("format 1 (a JSON object) is refused, naming it and the formats opened", () => {
    expect(openBillingToken(ring.seal(JSON.stringify(c)), ring, now)).toEqual({
      ok: false,
      rule: "billing-token-invalid",
      message: "token format 1 (JSON) is not one this adxkit reads (3, or the JSON of format 2): a retired format, its tokens expired",
    });
  });

  test("formats 2 and 3, still opened, count", () => {
    const positional = JSON.stringify([2, c.jti, c.aid, c.iid, c.seat, c.px, c.cur, c.burl, c.k, c.exp]);
    expect(openBillingToken(ring.seal(positional), ring, now)).toMatchObject({ ok: true, claims: c });
    expect(openBillingToken(sealBillingToken(c, ring), ring, now)).toMatchObject({ ok: true, claims: c });
  });
});
