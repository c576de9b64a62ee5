/**
 * Substitution macros of interface document 2.7 (spec/openapi/bidding.yaml, components.x-macros).
 * The exchange replaces them in nurl and burl before calling them, and in the ad markup, whether
 * it came in adm or from the win notice. Replacement is literal (no URL-encoding, no regard to
 * syntax); a macro whose source was not specified becomes the empty string. Text that merely
 * looks like a macro but is not in the table stays as it is.
 */
import { macros } from "@adxkit/bindings";
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

/** The macro table of the spec (generated), each row naming the field of MacroValues it reads. */
export const MACROS: readonly { macro: string; field: keyof MacroValues; source: string }[] = macros as readonly { macro: string; field: keyof MacroValues; source: string }[];

const fieldByName = new Map(MACROS.map((m) => [m.macro.slice(2, -1), m.field]));
const MACRO_START = "${AUCTION_";

/**
 * Replaces every macro of the table in `text`, in one pass: a replacement value that itself
 * contains a macro is not expanded again.
 */
export function replaceMacros(text: string, values: MacroValues): string {
  if (!text.includes(MACRO_START)) return text;
  const template = compile(text);
  // Joined, not concatenated: join makes one flat string, while `+=` makes a rope that
  // JSON.stringify of the bid response walks on a slow path (twice the cost for a 4.6 KB VAST document).
  const parts = template.slice();
  for (let i = 1; i < parts.length; i += 2) parts[i] = values[template[i] as keyof MacroValues] ?? "";
  return parts.join("");
}

/** Text split at its macros: literal, field, literal, field, …, literal. Markup repeats across auctions: cached. */
type Template = (string | keyof MacroValues)[];
const templates = new TextCache<Template>(4096);

function compile(text: string): Template {
  const hit = text.length >= 512 ? templates.get(text) : undefined;
  if (hit !== undefined) return hit;
  const template: Template = [];
  let last = 0;
  // indexOf, not a global regex: notice URLs are unique per bid and compiled every time.
  for (let at = text.indexOf(MACRO_START); at !== -1; ) {
    const end = text.indexOf("}", at + MACRO_START.length);
    if (end === -1) break;
    const field = fieldByName.get(text.slice(at + 2, end));
    if (field === undefined) {
      at = text.indexOf(MACRO_START, at + 1); // not a macro of the table: stays in the literal
      continue;
    }
    template.push(text.slice(last, at), field);
    last = end + 1;
    at = text.indexOf(MACRO_START, last);
  }
  template.push(text.slice(last));
  // Short texts (notice URLs, often unique per bid) are cheap to split: only markup is cached.
  if (text.length >= 512) templates.set(text, template);
  return template;
}
