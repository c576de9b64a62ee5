/**
 * The token in the exchange's own burl (`/events/billing?token=…`): what the billing event needs
 * to record the impression and call the bidder's burl, sealed (token-seal.ts: AES-256-GCM under
 * the billing key ring) so that nobody else can mint or change one, and whoever holds the markup
 * cannot read the clearing price or the bidder's own billing URL from it. The facts' dimensions
 * travel as the auction key of the fact-key codec (@adxkit/bindings/reports), with its version: a
 * token minted before a dimension was added still counts, the new dimension taking its default;
 * one of a newer version is refused, saying so.
 */
import { randomBytes } from "node:crypto";
import { decodeAuctionKey, type AuctionKey } from "@adxkit/bindings/reports";
import type { SealKeyRing } from "./token-seal.js";

/** What a billing token carries. */
export interface BillingClaims {
  /** Token id: a billing event counts once per id. */
  jti: string;
  /** Auction (bid request) id. */
  aid: string;
  /** Imp id. */
  iid: string;
  seat: string;
  /** Clearing price, CPM in micro-units. */
  px: number;
  cur: string;
  /** The bidder's burl with its macros replaced, when it gave one. */
  burl?: string;
  /** The auction key: [fact-key version, ...the dimensions of both sides' facts] (encodeAuctionKey). */
  k: (string | number)[];
  /** Expiry, epoch milliseconds. */
  exp: number;
}

/** Why a token is refused, as rule ids of the 403 answer. */
export type BillingTokenProblem = "billing-token-invalid" | "billing-token-expired";

/** A genuine token's claims and the key its facts count under. */
export type VerifyResult = { ok: true; claims: BillingClaims; key: AuctionKey } | { ok: false; rule: BillingTokenProblem; message: string };

// Token ids: a random prefix per process and a counter, unique without a random draw per token.
const idPrefix = randomBytes(9).toString("base64url");
let idCounter = 0;

/** A fresh token id: 72 random bits of this process, then a counter. */
export function newTokenId(): string {
  return `${idPrefix}${(++idCounter).toString(36)}`;
}

/**
 * The claims as sealed: a JSON array in a fixed order after a form number, not an object. Names
 * were a fifth of the plaintext; a shorter plaintext is a shorter burl and less to encrypt.
 */
const POSITIONAL = 2;

/** Seals claims into a token. */
export function sealBillingToken(c: BillingClaims, ring: SealKeyRing): string {
  return ring.seal(JSON.stringify([POSITIONAL, c.jti, c.aid, c.iid, c.seat, c.px, c.cur, c.burl ?? null, c.k, c.exp]));
}

/** Positional claims as the object; tokens sealed as an object (before the positional form) pass as they are. */
function fromPositional(payload: unknown): unknown {
  if (!Array.isArray(payload) || payload[0] !== POSITIONAL || payload.length !== 10) return payload;
  const [, jti, aid, iid, seat, px, cur, burl, k, exp] = payload;
  return { jti, aid, iid, seat, px, cur, ...(burl !== null ? { burl } : {}), k, exp };
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
  let payload: unknown;
  try {
    payload = JSON.parse(opened.plaintext.toString("utf8"));
  } catch {
    return invalid("token payload is not JSON");
  }
  const claims = withAuctionKey(fromPositional(payload));
  if (!isClaims(claims)) return invalid("token payload is incomplete");
  // The key must read (its version, its values' shapes); whether the store keeps its facts is the
  // exchange's check before it answers (billing-fact-refused).
  const key = decodeAuctionKey(claims.k);
  if (typeof key === "string") return invalid(`token auction key: ${key}`);
  if (claims.exp <= now) return { ok: false, rule: "billing-token-expired", message: `token expired at ${new Date(claims.exp).toISOString()}` };
  return { ok: true, claims, key };
}

const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * Tokens minted before the auction key had versions carried its dimensions as claims of their own
 * (dh, pub, app, plc, fmt, plt, cty, bdr): they are fact-key version 1. Those still count until
 * they expire; this turns their claims into the key.
 */
function withAuctionKey(payload: any): any {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload) || payload.k !== undefined || payload.dh === undefined) return payload;
  const { dh, pub, app, plc, fmt, plt, cty, bdr, ...rest } = payload;
  return { ...rest, k: [1, dh, pub, app, plc, fmt, plt, cty, bdr] };
}

/** The claims' shape (the key's values are checked by the codec). */
function isClaims(c: any): c is BillingClaims {
  return (
    typeof c === "object" && c !== null && !Array.isArray(c) &&
    ["jti", "aid", "iid", "seat", "cur"].every((k) => typeof c[k] === "string") &&
    count(c.px) &&
    Array.isArray(c.k) &&
    Number.isFinite(c.exp) &&
    (c.burl === undefined || typeof c.burl === "string")
  );
}
