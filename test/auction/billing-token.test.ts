import { describe, expect, test } from "vitest";
import { newTokenId, signBillingToken, verifyBillingToken, type BillingClaims } from "../../service/auction/billing-token.js";

const secret = Buffer.from("secret-1");
const claims: BillingClaims = {
  jti: newTokenId(), aid: "a", iid: "1", bdr: "dsp", seat: "s", px: 1_510_000, cur: "USD", burl: "https://b.example/bill?p=1.51",
  dh: "2026-01-01T10:00:00", pub: "p", app: "com.x", plc: "pl", fmt: 1, plt: 2, cty: "USA", exp: 2_000,
};

describe("billing token", () => {
  test("round trip", () => {
    const token = signBillingToken(claims, secret);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(verifyBillingToken(token, secret, 1_000)).toEqual({ ok: true, claims });
  });

  test.each([
    ["another secret", (t: string) => t, Buffer.from("secret-2")],
    ["payload changed", (t: string) => Buffer.from(JSON.stringify({ ...claims, px: 99_000_000 })).toString("base64url") + t.slice(t.indexOf(".")), secret],
    ["signature cut", (t: string) => t.slice(0, -4), secret],
    ["no dot", (t: string) => t.replace(".", ""), secret],
    ["two dots", (t: string) => t + ".x", secret],
    ["garbage", () => "%%%", secret],
    ["empty", () => "", secret],
  ])("forged or malformed: %s", (_name, change, key) => {
    const verdict = verifyBillingToken(change(signBillingToken(claims, secret)), key, 1_000);
    expect(verdict).toMatchObject({ ok: false, rule: "billing-token-invalid" });
  });

  test("a signature spelled another way (its last character's 2 unused bits changed) is invalid", () => {
    const token = signBillingToken(claims, secret);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(token.at(-1)!);
    const sameBytes = [1, 2, 3].map((bits) => token.slice(0, -1) + alphabet[last ^ bits]);
    // Each decodes to the genuine signature's 32 bytes: only the text tells them apart.
    for (const variant of sameBytes) expect(Buffer.from(variant.split(".")[1], "base64url")).toEqual(Buffer.from(token.split(".")[1], "base64url"));
    for (const variant of sameBytes) expect(verifyBillingToken(variant, secret, 1_000)).toMatchObject({ ok: false, rule: "billing-token-invalid" });
  });

  test("not a string", () => {
    expect(verifyBillingToken(["a", "b"], secret, 0)).toMatchObject({ ok: false, rule: "billing-token-invalid" });
    expect(verifyBillingToken(undefined, secret, 0)).toMatchObject({ ok: false, rule: "billing-token-invalid" });
  });

  test("expired", () => {
    expect(verifyBillingToken(signBillingToken(claims, secret), secret, 2_000)).toMatchObject({ ok: false, rule: "billing-token-expired" });
  });

  test("a forged token is invalid even when also expired", () => {
    expect(verifyBillingToken(signBillingToken(claims, secret), Buffer.from("x"), 5_000)).toMatchObject({ rule: "billing-token-invalid" });
  });
});
