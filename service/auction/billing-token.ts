/**
 * The token in the exchange's own burl (`/events/billing?token=…`): what the billing event needs
 * to record the impression and call the bidder's burl, sealed (token-seal.ts: AES-256-GCM under
 * the billing key ring) so that nobody else can mint or change one, and whoever holds the markup
 * cannot read the clearing price or the bidder's own billing URL from it.
 */
import { randomBytes } from "node:crypto";
import type { SealKeyRing } from "./token-seal.js";

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

/** Seals claims into a token. */
export function sealBillingToken(claims: BillingClaims, ring: SealKeyRing): string {
  return ring.seal(Buffer.from(JSON.stringify(claims), "utf8"));
}

const problems = {
  malformed: "token is malformed",
  "unknown-key": "token was sealed with a key this exchange does not hold (rotated out, or another exchange's)",
  forged: "token does not authenticate",
} as const;

/** Opens a token (authenticated, constant work per key), then checks its shape, then its expiry against `now`. */
export function openBillingToken(token: unknown, ring: SealKeyRing, now: number): VerifyResult {
  const invalid = (message: string): VerifyResult => ({ ok: false, rule: "billing-token-invalid", message });
  if (typeof token !== "string" || token.length === 0) return invalid("token is missing");
  if (token.length > 16 * 1024) return invalid("token is too long");
  const opened = ring.open(token);
  if (!opened.ok) return invalid(problems[opened.problem]);
  let claims: BillingClaims;
  try {
    claims = JSON.parse(opened.plaintext.toString("utf8"));
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
