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
import { billingTokenFormats } from "@adxkit/bindings";
import { ByteReader, ByteWriter, decodeAuctionKey, readAuctionKeyBytes, writeAuctionKeyBytes, type AuctionKey } from "@adxkit/bindings/reports";
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

/** A format the spec still opens (x-adxkit-token-formats opened). */
type OpenedFormat = (typeof billingTokenFormats.opened)[number];
const opens = (format: number) => (billingTokenFormats.opened as readonly number[]).includes(format);

/** Token format 1: the claims as a JSON object (the first, opened until its tokens expire). */
const NAMED = 1;

/**
 * Token format 2: the claims as a JSON array in a fixed order after the form number. Written now
 * only for claims format 3 cannot hold, so the spec must still open it (typed: a spec that drops it
 * does not compile here).
 */
const POSITIONAL: OpenedFormat & 2 = 2;

/**
 * Token format 3: the claims in binary after a first byte 3 (no JSON text starts with it), in
 * the order of format 2: jti, aid, iid, seat as texts, px as a varint, cur, 0 or 1 then burl, the
 * auction key (the fact-key codec's binary form, @adxkit/bindings/reports), exp as a varint. A
 * third shorter than the JSON, and written without JSON.stringify: a seal took 3.0-5.4 µs so,
 * 5.4-9.2 µs with the JSON text (of which JSON.stringify 1.4-2.3), same runs of
 * bench/exchange-work.ts (2026-11-26 21:27-21:36, load 5-8).
 */
const BINARY: 3 = billingTokenFormats.written;

/**
 * The claims' bytes, written for each token after 12 bytes left for the seal's IV and sealed where
 * they are (`SealKeyRing.sealWritten`: a Buffer of its own memory, whose words align); one thread
 * seals, so nothing else writes between.
 */
const claimsBytes = new ByteWriter(1024, (size) => Buffer.allocUnsafeSlow(size));
const AT_CLAIMS = 12;

/** Seals claims into a token. */
export function sealBillingToken(c: BillingClaims, ring: SealKeyRing): string {
  const w = claimsBytes;
  w.bytes[AT_CLAIMS] = BINARY;
  w.at = AT_CLAIMS + 1;
  const written =
    w.text(c.jti) && w.text(c.aid) && w.text(c.iid) && w.text(c.seat) && w.varint(c.px) && w.text(c.cur) &&
    (c.burl === undefined ? w.varint(0) : w.varint(1) && w.text(c.burl)) &&
    writeAuctionKeyBytes(w, c.k) && w.varint(c.exp);
  if (written) return ring.sealWritten(w);
  // What the binary form cannot hold (a lone surrogate in a text, a key of an older version): JSON, which every version opens.
  return ring.seal(JSON.stringify([POSITIONAL, c.jti, c.aid, c.iid, c.seat, c.px, c.cur, c.burl ?? null, c.k, c.exp]));
}

/** Claims of format 3 as an object (the checks of every format follow), or why they do not read. */
function fromBinary(bytes: Buffer): unknown {
  const r = new ByteReader(bytes, 1, bytes.length);
  const jti = r.text();
  const aid = r.text();
  const iid = r.text();
  const seat = r.text();
  const px = r.varint();
  const cur = r.text();
  const hasBurl = r.varint();
  const burl = hasBurl === 1 ? r.text() : undefined;
  if ([jti, aid, iid, seat, px, cur].includes(undefined) || (hasBurl !== 0 && (hasBurl !== 1 || burl === undefined))) return undefined;
  const k = readAuctionKeyBytes(r);
  if (typeof k === "string") return k;
  const exp = r.varint();
  if (exp === undefined || r.at !== r.end) return undefined;
  return { jti, aid, iid, seat, px, cur, ...(burl !== undefined ? { burl } : {}), k, exp };
}

/** Positional claims as the object; tokens sealed as an object (before the positional form) pass as they are. */
function fromPositional(payload: unknown): unknown {
  if (!Array.isArray(payload) || payload[0] !== POSITIONAL || payload.length !== 10) return payload;
  const [, jti, aid, iid, seat, px, cur, burl, k, exp] = payload;
  return { jti, aid, iid, seat, px, cur, ...(burl !== null ? { burl } : {}), k, exp };
}

/** The formats opened, as the refusal of another names them: `3, or the JSON of formats 1 and 2`. */
const OPENED_TEXT = (() => {
  const json = billingTokenFormats.opened.filter((f) => f === NAMED || f === POSITIONAL);
  return json.length === 0 ? `${BINARY}` : `${BINARY}, or the JSON of format${json.length > 1 ? "s" : ""} ${json.join(" and ")}`;
})();

/** A plaintext's format: its first byte, the JSON formats by their first character. */
const formatOf = (plaintext: Buffer) => (plaintext.length === 0 ? "(empty)" : plaintext[0] === 0x7b ? `${NAMED} (JSON)` : plaintext[0] === 0x5b ? `${POSITIONAL} (JSON)` : `${plaintext[0]}`);

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
  const plaintext = opened.plaintext;
  let payload: unknown;
  if (plaintext[0] === BINARY) {
    payload = fromBinary(plaintext);
    if (typeof payload === "string") return invalid(`token auction key: ${payload}`);
  } else if ((plaintext[0] === 0x5b && opens(POSITIONAL)) || (plaintext[0] === 0x7b && opens(NAMED))) {
    // `[` or `{`: the JSON formats (2 and 1), which still count until they expire.
    try {
      payload = fromPositional(JSON.parse(plaintext.toString("utf8")));
    } catch {
      return invalid("token payload is not JSON");
    }
  } else {
    // A JSON format the spec no longer opens had its last tokens expire; any other is newer than this build.
    const why = plaintext[0] === 0x5b || plaintext[0] === 0x7b ? "a retired format, its tokens expired" : "sealed by a newer adxkit?";
    return invalid(`token format ${formatOf(plaintext)} is not one this adxkit reads (${OPENED_TEXT}): ${why}`);
  }
  const claims = withAuctionKey(payload);
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
