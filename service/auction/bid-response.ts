/**
 * The answer to the caller: per winner its bid at the clearing price, its markup with macros
 * replaced, the exchange's own burl (a sealed billing token) instead of the bidder's, nurl and
 * lurl removed; the win notice queued. Grouped by seat; 204 when no imp has a winner.
 */
import { randomBytes } from "node:crypto";
import { auctionRules, type Bid, type BidResponse, type SeatBid } from "@adxkit/bindings";
import type { OperationOutput } from "@adxkit/bindings/fastify";
import { encodeAuctionKey } from "@adxkit/bindings/reports";
import { RESPONSE, rejectBid, type AuctionContext, type AuctionEnv, type Winner } from "./auction-context.js";
import type { TextMarkupBid } from "./bid-checks.js";
import { newTokenId, sealBillingToken, type BillingClaims } from "./billing-token.js";
import { markupJson, replaceMacros, type MacroValues } from "./macros.js";
import { fromMicros } from "./money.js";
import type { NoticeSender } from "./notices.js";
import type { NoticeThread } from "./notice-thread.js";
import { macroValues } from "./winners.js";
import type { MediaKind } from "./markup.js";

/** Where answers send the device to bill, and where their win notices go. */
export interface AnswerSettings {
  /** The exchange's public base URL, without a trailing slash. */
  publicUrl: string;
  /** Lifetime of a billing token, ms. */
  billingTtlMs: number;
  /** Where win notices are queued (the notice thread when there is one). */
  noticeQueue: NoticeSender | NoticeThread;
}

/** The bid response: one winning bid per imp, grouped by seat; 204 when no imp has one. */
export function bidResponse(env: AuctionEnv, settings: AnswerSettings, context: AuctionContext, winners: Winner[]): OperationOutput {
  if (winners.length === 0) return { status: 204 };
  const currency = context.currency;
  const seats = new Map<string, Bid[]>();
  const markups: AnsweredMarkup[] = [];
  const expires = env.clock() + settings.billingTtlMs;
  for (const winner of winners) {
    const { candidate, slot } = winner;
    const values = macroValues(env, context, winner);
    const bid = candidate.bid;
    const claims: BillingClaims = {
      jti: newTokenId(),
      aid: context.request.id,
      iid: slot.imp.id,
      seat: candidate.seat,
      // The reports' currency: what the billing call records (the rates have a pair, or the bid could not compete).
      px: env.rates.convert(winner.clearingMicros, currency, auctionRules.reportCurrency) ?? 0,
      cur: auctionRules.reportCurrency,
      burl: bid.burl !== undefined ? replaceMacros(bid.burl, values, "url") : undefined,
      // Object.assign, not a spread plus a property: V8 copies that spread on its slow path (~2 µs).
      k: encodeAuctionKey(Object.assign({ bidder_id: candidate.bidder.config.id }, slot.supplyKey)),
      exp: expires,
    };
    // Joined, not a template: one flat string, which JSON.stringify of the answer copies on its
    // fast path (a template makes a rope of the ~600-character token; about 1 µs more to write).
    const burl = [settings.publicUrl, "/events/billing?token=", sealBillingToken(claims, env.billingKeys)].join("");
    if (burl.length > auctionRules.maxBurlLength) {
      // The billing URL could not travel to the device whole: no bid for this imp rather than one nobody can bill.
      rejectBid(env, context, candidate.bidder, { reason: "burl-too-long", detail: `the billing URL would be ${burl.length} characters (max-burl-length ${auctionRules.maxBurlLength})` }, bid.id, bid.impid);
      continue;
    }
    const markup = winner.markup ?? bid.adm!;
    // The markup passed its check as this kind (checkBid, or fetchMissingMarkup): its values are escaped for that kind.
    const kind = winner.kind ?? candidate.kind ?? "banner";
    // Its JSON text is spliced into the answer's in place of a marker (answerText).
    const out = answeredBid(bid, fromMicros(winner.clearingMicros), markerOf(markups.length), burl);
    markups.push({ json: markupJson(markup, values, kind), markup, values, kind });
    let list = seats.get(candidate.seat);
    if (list === undefined) seats.set(candidate.seat, (list = []));
    list.push(out);
    if (winner.markup === undefined && bid.nurl !== undefined) {
      // Queued: the notice sender holds it for its batch, so the answer does not wait for it.
      settings.noticeQueue.send("win", replaceMacros(bid.nurl, values, "url"), { auction: context.request.id, bidder: candidate.bidder.config.id, imp: slot.imp.id });
    }
    candidate.bidder.counters.wins++;
    env.counters.impsWon++;
    context.increments.push({ side: "supply", key: slot.supplyKey, id: slot.supplyId, counts: RESPONSE });
  }
  if (seats.size === 0) return { status: 204 };
  const seatbid: SeatBid[] = [];
  for (const [seat, bids] of seats) seatbid.push(seat === "" ? { bid: bids as SeatBid["bid"] } : { seat, bid: bids as SeatBid["bid"] });
  const body: BidResponse = { id: context.request.id, cur: currency, seatbid };
  return { status: 200, body: answerText(body, markups), headers: JSON_ANSWER };
}

const JSON_ANSWER = Object.freeze({ "content-type": "application/json; charset=utf-8" });

/** A winner's markup: its JSON text (markupJson), and what makes it again for the answer's slow path. */
interface AnsweredMarkup {
  json: string;
  markup: string;
  values: MacroValues;
  kind: MediaKind;
}

/**
 * Stands for the i-th winner's markup in the answer until its JSON text is spliced in: a NUL, a
 * per-process random nonce, the index. Bidders and callers cannot know the nonce, and answerText
 * checks that each marker occurs once anyway.
 */
const MARKER_PREFIX = `\u0000adxkit-markup:${randomBytes(8).toString("hex")}:`;
const markerOf = (i: number) => MARKER_PREFIX + i;

/**
 * The answer's JSON text: JSON.stringify(body), each markup marker's JSON string replaced by its
 * markup's JSON text (markupJson). The same text as JSON.stringify of the body holding the
 * markups themselves, without escaping their thousands of characters on every auction; when a
 * marker is not found exactly once (never expected), the body is serialised with its markups.
 */
function answerText(body: BidResponse, markups: readonly AnsweredMarkup[]): string {
  const text = JSON.stringify(body);
  const found: { at: number; end: number; json: string }[] = [];
  for (let i = 0; i < markups.length; i++) {
    const marker = JSON.stringify(markerOf(i));
    const at = text.indexOf(marker);
    if (at === -1 || text.indexOf(marker, at + 1) !== -1) return withMarkups(body, markups);
    found.push({ at, end: at + marker.length, json: markups[i].json });
  }
  if (found.length > 1) found.sort((a, b) => a.at - b.at);
  const parts: string[] = [];
  let last = 0;
  for (const { at, end, json } of found) {
    parts.push(text.slice(last, at), json);
    last = end;
  }
  parts.push(text.slice(last));
  return parts.join("");
}

/** JSON.stringify of the body with each marker replaced by its markup (macros replaced). */
function withMarkups(body: BidResponse, markups: readonly AnsweredMarkup[]): string {
  const byMarker = new Map(markups.map((m, i) => [markerOf(i), m]));
  for (const seat of body.seatbid ?? []) {
    for (const bid of seat.bid) {
      const m = typeof bid.adm === "string" ? byMarker.get(bid.adm) : undefined;
      if (m !== undefined) bid.adm = replaceMacros(m.markup, m.values, m.kind);
    }
  }
  return JSON.stringify(body);
}

/**
 * The winning bid as answered: the bidder's own fields in their order, nurl and lurl left out,
 * price, adm and burl the exchange's (in the bid's place for each it had, else last). Copied
 * field by field: the rest pattern and a spread with properties after it took V8's slow path
 * (0.4–0.7 against 0.25–0.3 µs a bid, measured in one process).
 */
function answeredBid(bid: TextMarkupBid, price: number, adm: string, burl: string): Bid {
  const out: Record<string, unknown> = {};
  // for-in: a bid is a plain object of JSON.parse (or the lenient validator's copy), nothing enumerable inherited.
  for (const name in bid) {
    if (name === "nurl" || name === "lurl") continue;
    // A field named __proto__ (JSON.parse makes it an own field) stays a field, as a spread kept it.
    if (name === "__proto__") Object.defineProperty(out, name, { value: bid[name as keyof TextMarkupBid], enumerable: true, writable: true, configurable: true });
    else out[name] = bid[name as keyof TextMarkupBid];
  }
  out.price = price;
  out.adm = adm;
  out.burl = burl;
  return out as unknown as Bid;
}
