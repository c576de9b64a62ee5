/**
 * Substitution macros of interface document 2.7 (spec/openapi/bidding.yaml, components.x-macros).
 * The exchange replaces them in nurl and burl before calling them, and in the ad markup, whether
 * it came in adm or from the win notice. Text that merely looks like a macro but is not in the
 * table stays as it is; a macro whose source was not specified becomes the empty string.
 *
 * Each value is encoded for where it lands (bidding.yaml, info.x-adxkit-choice): the request id and imp id
 * come from the caller, the bid, seat and ad ids from the bidder, and substituted literally a
 * request id of `x&price=0.000001#` rewrote the price of a bidder's own win notice. In a URL the
 * exchange calls, a value is percent-encoded; in markup, a value inside a URL (the text it is
 * part of starts with http://, https:// or //) is percent-encoded too, any other is escaped for
 * the markup: HTML (banner) and XML (VAST) entities, JSON string escapes (native). Ids made of
 * letters, digits and `-._~` — what ids are — come out unchanged.
 */
import { macros } from "@adxkit/bindings";
import type { MediaKind } from "./markup.js";
import { TextCache } from "./text-cache.js";

/** Where each macro's value comes from, for one winning bid. */
export interface MacroValues {
  /** Id of the bid request. */
  auctionId: string;
  /** bidid of the bidder's bid response. */
  bidId?: string;
  /** Id of the impression won. */
  impId: string;
  /** Id of the bidder seat. */
  seatId?: string;
  /** bid.adid. */
  adId?: string;
  /** Clearing price as decimal text (formatMicros), same currency and units as the bid. */
  price: string;
  /** Bid currency, explicit or implied. */
  currency: string;
}

/** Where a text with macros lands: a URL the exchange calls (nurl, burl), or ad markup of one type. */
export type MacroTarget = "url" | MediaKind;

/** The macro table of the spec (generated), each row naming the field of MacroValues it reads. */
export const MACROS: readonly { macro: string; field: keyof MacroValues; source: string }[] = macros as readonly { macro: string; field: keyof MacroValues; source: string }[];

const MACRO_START = "${AUCTION_";

type Encode = (value: string) => string;

/** Unreserved characters of RFC 3986: never encoded, in any of the targets. */
const plain = /^[A-Za-z0-9._~-]*$/;

/** A UTF-16 surrogate without its other half: encodeURIComponent throws on one. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Percent-encoding of everything but the unreserved characters (encodeURIComponent leaves !'()* too); a lone surrogate becomes U+FFFD. */
export const percentEncode: Encode = (value) =>
  plain.test(value) ? value : encodeURIComponent(value.replace(loneSurrogate, "\ufffd")).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
/** HTML and XML text or attribute value: the five characters that can end either. */
export const markupEscape: Encode = (value) => (plain.test(value) ? value : value.replace(/[&<>"']/g, (c) => entities[c]));

/** Inside a JSON string: JSON's own escapes (quotes, backslashes, control characters, lone surrogates). */
export const jsonEscape: Encode = (value) => (plain.test(value) ? value : JSON.stringify(value).slice(1, -1));

const markupEncoders: Record<MediaKind, Encode> = { banner: markupEscape, video: markupEscape, native: jsonEscape };

/**
 * Characters that end the run of text a macro is part of: white space, quotes, tag delimiters,
 * and the brackets around CSS url(…) and XML CDATA. Not braces: an earlier macro in the same URL
 * is part of the run.
 */
const runBoundary = /[\s"'`<>()[\]]/;
/** runBoundary for ASCII, by code unit: the walk back tests one character at a time. */
const asciiBoundary: readonly boolean[] = Array.from({ length: 128 }, (_, c) => runBoundary.test(String.fromCharCode(c)));
const urlStart = /^(?:https?:)?\/\//i;

/** Whether the macro at `at` of markup `text` sits in a URL: its run of text starts with a scheme (JSON may escape `/` as `\/`). */
function inUrl(text: string, at: number): boolean {
  let start = at;
  for (; start > 0; start--) {
    const c = text.charCodeAt(start - 1);
    if (c < 128 ? asciiBoundary[c] : runBoundary.test(text[start - 1])) break;
  }
  return urlStart.test(text.slice(start, at).replace(/\\\//g, "/"));
}

/**
 * Replaces every macro of the table in `text`, in one pass (a value that itself contains a
 * macro is not expanded again), each value encoded for `target`.
 */
export function replaceMacros(text: string, values: MacroValues, target: MacroTarget): string {
  if (!text.includes(MACRO_START)) return text;
  if (target === "url") return replaceInUrl(text, values);
  const { literals, slots, encodings } = compile(text, target);
  // Each distinct value and encoding once per call: a VAST document repeats its trackers' seven
  // macros about eighty times (14.2 µs a call when each was encoded where it stood).
  const encoded: string[] = new Array(encodings.length);
  for (let i = 0; i < encodings.length; i++) encoded[i] = encodings[i].encode(values[encodings[i].field] ?? "");
  // Joined, not concatenated: join makes one flat string, while `+=` makes a rope that
  // JSON.stringify of the bid response walks on a slow path (twice the cost for a 4.6 KB VAST document).
  const parts: string[] = new Array(literals.length + slots.length);
  for (let i = 0; i < slots.length; i++) {
    parts[2 * i] = literals[i];
    parts[2 * i + 1] = encoded[slots[i]];
  }
  parts[parts.length - 1] = literals[slots.length];
  return parts.join("");
}

/**
 * JSON.stringify(replaceMacros(text, values, target)), the same text, for markup whose template
 * is cached: its literals are escaped once per template, so an answer carrying a 4.6 KB VAST
 * document no longer escapes its 72 quotes and 5,000 characters on every auction
 * (JSON.stringify of the whole answer: 14-18 µs, against 3-5 without the markup; bid-response.ts
 * splices this text in). Only the values, short ids and a price, are escaped per call.
 */
export function markupJson(text: string, values: MacroValues, target: MediaKind): string {
  // Markup without macros is not cached as a template (as in replaceMacros): the cache holds only what repeats with macros.
  if (!text.includes(MACRO_START)) return JSON.stringify(text);
  const template = compile(text, target);
  const json = (template.json ??= jsonLiterals(template.literals));
  const { slots, encodings } = template;
  if (json.split) return JSON.stringify(replaceMacros(text, values, target));
  const encoded: string[] = new Array(encodings.length);
  for (let i = 0; i < encodings.length; i++) {
    const value = encodings[i].encode(values[encodings[i].field] ?? "");
    if (plain.test(value)) encoded[i] = value;
    else if (splitsPair(value)) return JSON.stringify(replaceMacros(text, values, target));
    else encoded[i] = JSON.stringify(value).slice(1, -1);
  }
  const literals = json.literals;
  const parts: string[] = new Array(literals.length + slots.length + 2);
  parts[0] = '"';
  for (let i = 0; i < slots.length; i++) {
    parts[2 * i + 1] = literals[i];
    parts[2 * i + 2] = encoded[slots[i]];
  }
  parts[parts.length - 2] = literals[slots.length];
  parts[parts.length - 1] = '"';
  return parts.join("");
}

/** Whether `text` starts with a low surrogate or ends with a high one: escaped alone, it may write half of a pair its neighbour completes. */
function splitsPair(text: string): boolean {
  if (text.length === 0) return false;
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  return (first >= 0xdc00 && first <= 0xdfff) || (last >= 0xd800 && last <= 0xdbff);
}

function jsonLiterals(literals: readonly string[]): JsonLiterals {
  return { literals: literals.map((literal) => JSON.stringify(literal).slice(1, -1)), split: literals.some(splitsPair) };
}

/**
 * Text split at its macros: `literals` one more than `slots`, each slot an index into
 * `encodings` (a macro's field and its encoding there, each pair once). Markup repeats across
 * auctions: cached.
 */
interface Template {
  literals: string[];
  slots: number[];
  encodings: { field: keyof MacroValues; encode: Encode }[];
  /** The literals as JSON string contents (markupJson), made at its first use. */
  json?: JsonLiterals;
}

/**
 * A template's literals escaped as JSON.stringify escapes a string's contents (a copy: a cached
 * template then holds about twice its text, the text itself being its key). `split` when a
 * literal starts with a low or ends with a high surrogate: a value beside it could complete a
 * pair that the literal escaped alone writes as a lone one.
 */
interface JsonLiterals {
  literals: string[];
  split: boolean;
}
const templates: Record<MediaKind, TextCache<Template>> = { banner: new TextCache(4096), native: new TextCache(4096), video: new TextCache(4096) };

/**
 * The macro of the table `text` holds at `at`, where MACRO_START is: compared in place, code
 * unit by code unit after that prefix (no substring, no hashing; startsWith per entry was slower).
 */
function macroAt(text: string, at: number): (typeof MACROS)[number] | undefined {
  next: for (const entry of MACROS) {
    const macro = entry.macro;
    if (at + macro.length > text.length) continue;
    for (let i = MACRO_START.length; i < macro.length; i++) if (text.charCodeAt(at + i) !== macro.charCodeAt(i)) continue next;
    return entry;
  }
  return undefined;
}

/**
 * replaceMacros in a URL the exchange calls: each macro percent-encoded, in one pass without a
 * template (notice URLs are often unique per bid, and hold each macro about once).
 */
function replaceInUrl(text: string, values: MacroValues): string {
  const parts: string[] = [];
  let last = 0;
  for (let at = text.indexOf(MACRO_START); at !== -1; ) {
    const entry = macroAt(text, at);
    if (entry === undefined) {
      at = text.indexOf(MACRO_START, at + 1); // not a macro of the table: stays in the literal
      continue;
    }
    parts.push(text.slice(last, at), percentEncode(values[entry.field] ?? ""));
    last = at + entry.macro.length;
    at = text.indexOf(MACRO_START, last);
  }
  parts.push(text.slice(last));
  return parts.join("");
}

/** The template of markup `text` for `target`, cached. */
function compile(text: string, target: MediaKind): Template {
  const cache = templates[target];
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const template: Template = { literals: [], slots: [], encodings: [] };
  let last = 0;
  for (let at = text.indexOf(MACRO_START); at !== -1; ) {
    const entry = macroAt(text, at);
    if (entry === undefined) {
      at = text.indexOf(MACRO_START, at + 1); // not a macro of the table: stays in the literal
      continue;
    }
    const encode = inUrl(text, at) ? percentEncode : markupEncoders[target];
    let slot = template.encodings.findIndex((e) => e.field === entry.field && e.encode === encode);
    if (slot === -1) slot = template.encodings.push({ field: entry.field, encode }) - 1;
    template.literals.push(text.slice(last, at));
    template.slots.push(slot);
    last = at + entry.macro.length;
    at = text.indexOf(MACRO_START, last);
  }
  template.literals.push(text.slice(last));
  cache.set(text, template);
  return template;
}
