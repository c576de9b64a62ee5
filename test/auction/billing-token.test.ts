import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { encodeAuctionKey, type AuctionKey } from "@adxkit/bindings/reports";
import { billingKeysFile, loadBillingKeys, rotateBillingKeys } from "../../service/auction/billing-keys.js";
import { newTokenId, openBillingToken, sealBillingToken, type BillingClaims } from "../../service/auction/billing-token.js";
import { newSealKeyText, sealKey, SealKeyRing } from "../../service/auction/token-seal.js";

const ring = new SealKeyRing([sealKey("secret-1")]);
const key: AuctionKey = { date_hour: "2026-01-01T10:00:00", publisher_id: "p", app_bundle_id: "com.x", placement_id: "pl", ad_format: 1, platform: 2, country: "USA", bidder_id: "dsp" };
const claims: BillingClaims = {
  jti: newTokenId(), aid: "a", iid: "1", seat: "s", px: 1_510_000, cur: "USD", burl: "https://b.example/bill?p=1.51", k: encodeAuctionKey(key), exp: 2_000,
};
/** Tokens of other fact-key versions and formats, and what the exchange does with each (test/fixtures/fact-key/tokens.json). */
const fixtures: { name: string; claims: object; key?: AuctionKey; refused?: string }[] = JSON.parse(readFileSync(new URL("../fixtures/fact-key/tokens.json", import.meta.url), "utf8"));

describe("billing token", () => {
  test("round trip: the claims, and the key their facts count under", () => {
    const token = sealBillingToken(claims, ring);
    expect(token).toMatch(/^[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]+$/);
    expect(openBillingToken(token, ring, 1_000)).toEqual({ ok: true, claims, key });
  });

  test.each(fixtures)("other versions: $name", ({ claims: payload, key: expected, refused }) => {
    // Sealed as those versions did: their claims as a JSON object.
    const verdict = openBillingToken(ring.seal(Buffer.from(JSON.stringify(payload))), ring, 1_000);
    if (refused !== undefined) expect(verdict).toMatchObject({ ok: false, rule: "billing-token-invalid", message: expect.stringContaining(refused) });
    else expect(verdict).toMatchObject({ ok: true, key: expected });
  });

  test("claims sealed by name (the form before the positional one) still open, to the same claims; the positional form is shorter", () => {
    const byName = ring.seal(Buffer.from(JSON.stringify(claims)));
    expect(openBillingToken(byName, ring, 1_000)).toEqual({ ok: true, claims, key });
    expect(sealBillingToken(claims, ring).length).toBeLessThan(byName.length - 40);
    const { burl: _none, ...withoutBurl } = claims;
    expect(openBillingToken(sealBillingToken(withoutBurl, ring), ring, 1_000)).toEqual({ ok: true, claims: withoutBurl, key });
  });

  test("a text is sealed as its UTF-8 bytes, as the same text in a Buffer is", () => {
    const text = '["é",1,"日本","\u{1F600}"]';
    for (const sealed of [ring.seal(text), ring.seal(Buffer.from(text, "utf8"))]) {
      expect(ring.open(sealed)).toEqual({ ok: true, plaintext: Buffer.from(text, "utf8") });
    }
  });

  test("is opaque: neither the price, the bidder's burl nor any claim can be read from it", () => {
    const token = sealBillingToken(claims, ring);
    const bytes = Buffer.from(token.split(".")[1], "base64url").toString("latin1");
    for (const value of ["1510000", "b.example", "dsp", "com.x", "USA", "2026-01-01"]) expect(bytes).not.toContain(value);
    // Two tokens of the same claims differ (a fresh IV each): equal prices do not show either.
    expect(sealBillingToken(claims, ring)).not.toBe(token);
  });

  test.each([
    ["another key", (t: string) => t, new SealKeyRing([sealKey("secret-2")])],
    ["readable claims under the key id", (t: string) => `${t.split(".")[0]}.${Buffer.from(JSON.stringify({ ...claims, px: 99_000_000 })).toString("base64url")}`, ring],
    ["sealed part cut", (t: string) => t.slice(0, -4), ring],
    ["one character changed", (t: string) => t.slice(0, 20) + (t[20] === "A" ? "B" : "A") + t.slice(21), ring],
    ["no key id", (t: string) => t.split(".")[1], ring],
    ["two dots", (t: string) => t + ".x", ring],
    ["garbage", () => "%%%", ring],
    ["empty", () => "", ring],
  ])("forged or malformed: %s", (_name, change, key) => {
    const verdict = openBillingToken(change(sealBillingToken(claims, ring)), key, 1_000);
    expect(verdict).toMatchObject({ ok: false, rule: "billing-token-invalid" });
  });

  test("a sealed part spelled another way (its last character's unused bits changed) is invalid", () => {
    // A body of 3n bytes has no unused bits: the claims are lengthened until it has some.
    let token = sealBillingToken(claims, ring);
    for (let pad = 1; Buffer.from(token.split(".")[1], "base64url").length % 3 === 0; pad++) token = sealBillingToken({ ...claims, aid: "a".repeat(pad) }, ring);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(token.at(-1)!);
    const variants = [1, 2, 3].map((bits) => token.slice(0, -1) + alphabet[last ^ bits]).filter((v) => Buffer.from(v.split(".")[1], "base64url").equals(Buffer.from(token.split(".")[1], "base64url")));
    expect(variants.length).toBeGreaterThan(0);
    for (const variant of variants) expect(openBillingToken(variant, ring, 1_000)).toMatchObject({ ok: false, rule: "billing-token-invalid" });
  });

  test("not a string", () => {
    expect(openBillingToken(["a", "b"], ring, 0)).toMatchObject({ ok: false, rule: "billing-token-invalid" });
    expect(openBillingToken(undefined, ring, 0)).toMatchObject({ ok: false, rule: "billing-token-invalid" });
  });

  test("expired", () => {
    expect(openBillingToken(sealBillingToken(claims, ring), ring, 2_000)).toMatchObject({ ok: false, rule: "billing-token-expired" });
  });

  test("a forged token is invalid even when also expired", () => {
    expect(openBillingToken(sealBillingToken(claims, ring), new SealKeyRing([sealKey("x")]), 5_000)).toMatchObject({ rule: "billing-token-invalid" });
  });
});

describe("key rotation", () => {
  const first = sealKey(newSealKeyText());
  const second = sealKey(newSealKeyText());

  test("the first key seals, every key opens; a token of a dropped key is refused, naming why", () => {
    const before = new SealKeyRing([first]);
    const during = new SealKeyRing([second, first]);
    const after = new SealKeyRing([second]);
    const old = sealBillingToken(claims, before);
    const fresh = sealBillingToken(claims, during);
    expect(fresh.split(".")[0]).toBe(second.id);
    expect(openBillingToken(old, during, 1_000)).toMatchObject({ ok: true });
    expect(openBillingToken(fresh, after, 1_000)).toMatchObject({ ok: true });
    expect(openBillingToken(old, after, 1_000)).toMatchObject({ ok: false, rule: "billing-token-invalid", message: expect.stringContaining("does not hold") });
  });

  test("a key of 32 bytes in base64url is used as is; any other secret is stretched, and the same text is the same key", () => {
    const text = newSealKeyText();
    expect(sealKey(text).id).toBe(sealKey(text).id);
    expect(sealKey("short secret").id).toBe(sealKey(Buffer.from("short secret")).id);
    expect(sealKey("short secret").id).not.toBe(sealKey("another secret").id);
  });
});

describe("the key file beside the database", () => {
  const dir = mkdtempSync(join(tmpdir(), "adxkit-keys-"));
  const db = join(dir, "data", "adxkit.duckdb");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("is made once with one key, mode 0600, and read back the same", () => {
    const ring = loadBillingKeys(db, {});
    expect(statSync(billingKeysFile(db)).mode & 0o777).toBe(0o600);
    expect(loadBillingKeys(db, {}).keys.map((k) => k.id)).toEqual(ring.keys.map((k) => k.id));
  });

  test("add, promote, retire: tokens of the old key open until it is retired", () => {
    const start = loadBillingKeys(db, {});
    const token = sealBillingToken(claims, start);
    const added = rotateBillingKeys(db, "add");
    expect(added[0]).toBe(start.keys[0].id);
    expect(added).toHaveLength(2);
    const promoted = rotateBillingKeys(db, "promote");
    expect(promoted).toEqual([added[1], added[0]]);
    const during = loadBillingKeys(db, {});
    expect(sealBillingToken(claims, during).split(".")[0]).toBe(added[1]);
    expect(openBillingToken(token, during, 1_000)).toMatchObject({ ok: true });
    expect(rotateBillingKeys(db, "retire")).toEqual([added[1]]);
    expect(openBillingToken(token, loadBillingKeys(db, {}), 1_000)).toMatchObject({ ok: false });
    expect(readFileSync(billingKeysFile(db), "utf8")).toMatch(/^# adxkit billing keys/);
  });

  test("the environment wins over the file: ADXKIT_BILLING_KEYS (sealing key first), then ADXKIT_BILLING_SECRET", () => {
    const [a, b] = [newSealKeyText(), newSealKeyText()];
    expect(loadBillingKeys(db, { ADXKIT_BILLING_KEYS: `${a}, ${b}` }).keys.map((k) => k.id)).toEqual([sealKey(a).id, sealKey(b).id]);
    expect(loadBillingKeys(db, { ADXKIT_BILLING_SECRET: "legacy" }).keys.map((k) => k.id)).toEqual([sealKey(Buffer.from("legacy")).id]);
  });

  test("a database of an earlier version keeps its billing-secret until a key file is written", () => {
    const legacyDir = join(dir, "old");
    mkdirSync(legacyDir, { recursive: true });
    const secret = Buffer.alloc(32, 7);
    writeFileSync(join(legacyDir, "billing-secret"), secret.toString("base64url"));
    const old = join(legacyDir, "adxkit.duckdb");
    expect(loadBillingKeys(old, {}).keys.map((k) => k.id)).toEqual([sealKey(secret).id]);
    expect(rotateBillingKeys(old, "add")[0]).toBe(sealKey(secret).id);
  });
});
