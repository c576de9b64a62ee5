/**
 * The token in the exchange's own burl (`/events/billing?token=…`): what the billing event needs
 * to record the impression and call the bidder's burl, signed so that nobody else can mint one.
 * Form: base64url(JSON payload) + "." + base64url(HMAC-SHA256(secret, first part)).
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from "node:crypto";

/** What a billing token carries. */
export interface BillingClaims {
  /** Token id: a billing event counts once per id. */
  jti: string;
  /** Auction (bid request) id. */
  aid: string;
  /** Imp id. */
  iid: string;
  /** Bidder id (the demand reports' bidder_id). */
  bdr: string;
  seat: string;
  /** Clearing price, CPM in micro-units. */
  px: number;
  cur: string;
  /** The bidder's burl with its macros replaced, when it gave one. */
  burl?: string;
  /** Dimensions of the facts: date_hour of the auction, publisher, bundle, placement, ad format, platform, country. */
  dh: string;
  pub: string;
  app: string;
  plc: string;
  fmt: number;
  plt: number;
  cty: string;
  /** Expiry, epoch milliseconds. */
  exp: number;
}

/** Why a token is refused, as rule ids of the 403 answer. */
export type BillingTokenProblem = "billing-token-invalid" | "billing-token-expired";

export type VerifyResult = { ok: true; claims: BillingClaims } | { ok: false; rule: BillingTokenProblem; message: string };

// Token ids: a random prefix per process and a counter, unique without a random draw per token.
const idPrefix = randomBytes(9).toString("base64url");
let idCounter = 0;

/** A fresh token id: 72 random bits of this process, then a counter. */
export function newTokenId(): string {
  return `${idPrefix}${(++idCounter).toString(36)}`;
}

// The secret as a KeyObject, made once per secret: createHmac would import a Buffer key on every call.
let lastSecret: Buffer | undefined;
let lastKey: KeyObject | undefined;
function keyOf(secret: Buffer): KeyObject {
  if (secret !== lastSecret) {
    lastKey = createSecretKey(secret);
    lastSecret = secret;
  }
  return lastKey!;
}

/** HMAC-SHA256 of a token's first part (base64url text, so latin1 is its exact encoding). */
function sign(secret: Buffer, body: string): Buffer {
  return createHmac("sha256", keyOf(secret)).update(body, "latin1").digest();
}

/** Signs claims into a token. */
export function signBillingToken(claims: BillingClaims, secret: Buffer): string {
  const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${body}.${sign(secret, body).toString("base64url")}`;
}

const base64url = /^[A-Za-z0-9_-]+$/;

/** Checks a token's signature (constant time), then its shape, then its expiry against `now`. */
export function verifyBillingToken(token: unknown, secret: Buffer, now: number): VerifyResult {
  const invalid = (message: string): VerifyResult => ({ ok: false, rule: "billing-token-invalid", message });
  if (typeof token !== "string" || token.length === 0) return invalid("token is missing");
  if (token.length > 16 * 1024) return invalid("token is too long");
  const dot = token.indexOf(".");
  if (dot <= 0 || dot !== token.lastIndexOf(".")) return invalid("token is malformed");
  const body = token.slice(0, dot);
  const signature = token.slice(dot + 1);
  if (!base64url.test(body) || !base64url.test(signature)) return invalid("token is malformed");
  // Compared as text: the last of 43 base64url characters carries 2 unused bits, so decoding
  // would accept four spellings of one signature (a changed token that still passed).
  const given = Buffer.from(signature, "latin1");
  const expected = Buffer.from(sign(secret, body).toString("base64url"), "latin1");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid("token signature does not match");
  let claims: BillingClaims;
  try {
    claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return invalid("token payload is not JSON");
  }
  if (!isClaims(claims)) return invalid("token payload is incomplete");
  if (claims.exp <= now) return { ok: false, rule: "billing-token-expired", message: `token expired at ${new Date(claims.exp).toISOString()}` };
  return { ok: true, claims };
}

const dateHour = /^\d{4}-\d{2}-\d{2}T\d{2}:00:00$/;
const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

/** The claims' shape, values included: even a token signed with the key must make a fact the store takes. */
function isClaims(c: any): c is BillingClaims {
  return (
    typeof c === "object" && c !== null && !Array.isArray(c) &&
    ["jti", "aid", "iid", "bdr", "seat", "cur", "dh", "pub", "app", "plc", "cty"].every((k) => typeof c[k] === "string") &&
    ["px", "fmt", "plt"].every((k) => count(c[k])) &&
    Number.isFinite(c.exp) &&
    dateHour.test(c.dh) &&
    (c.burl === undefined || typeof c.burl === "string")
  );
}
