/**
 * The per-bid checks of the auction (x-adxkit-auction.bid-checks) that the bid response schema
 * cannot make alone: floor, blocked advertisers, categories and attributes, markup type. Each
 * failure names its reason of spec/errors.yaml auction-rejections.
 */
import { iab, type AuctionRejection, type Bid, type BidRequest, type Imp } from "@adxkit/bindings";
import { markupKind, type MediaKind } from "./markup.js";
import { toMicros } from "./money.js";

/** A rejected bid: the reason id and a sentence for the log. */
export interface Rejection {
  reason: AuctionRejection;
  detail: string;
}

/** What the checks need of one imp, computed once per auction. */
export interface ImpRules {
  floorMicros: number;
  /** Ad types the imp offers, in the order video, native, banner. */
  kinds: MediaKind[];
  /** battr of every offered media object. */
  battr?: ReadonlySet<number>;
}

/** What the checks need of the request, computed once per auction. */
export interface RequestRules {
  /** Blocked advertiser domains, lower case. */
  badv?: readonly string[];
  bcat?: ReadonlySet<string>;
  lenient: boolean;
}

/** The checks' view of an imp. */
export function impRules(imp: Imp): ImpRules {
  const kinds: MediaKind[] = [];
  if (imp.video !== undefined) kinds.push("video");
  if (imp.native !== undefined) kinds.push("native");
  if (imp.banner !== undefined) kinds.push("banner");
  const blocked = [...(imp.banner?.battr ?? []), ...(imp.video?.battr ?? []), ...(imp.native?.battr ?? [])];
  return { floorMicros: toMicros(imp.bidfloor ?? 0), kinds, battr: blocked.length > 0 ? new Set(blocked) : undefined };
}

/** The checks' view of a request. */
export function requestRules(request: BidRequest, lenient: boolean): RequestRules {
  return {
    badv: request.badv && request.badv.length > 0 ? request.badv.map((d) => normalizeDomain(d)) : undefined,
    bcat: request.bcat && request.bcat.length > 0 ? new Set(request.bcat) : undefined,
    lenient,
  };
}

function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/^https?:\/\//, "").replace(/\/.*$/, "").replace(/^www\./, "");
}

/** A domain is blocked by a badv entry equal to it or to one of its parent domains. */
export function isDomainBlocked(domain: string, badv: readonly string[]): boolean {
  const d = normalizeDomain(domain);
  return badv.some((b) => d === b || d.endsWith("." + b));
}

/**
 * A bid whose markup, when it has one, is text: the exchange turns an adm sent as a JSON object
 * (accepted in lenient mode only, rule native-markup-object) into its JSON text first.
 */
export type TextMarkupBid = Bid & { adm?: string };

/** A bid's price in micro-units: in the auction's currency (it competes in it) and in the reports' currency. */
export interface BidPrice {
  auction: number;
  report: number;
}

/**
 * The first reason to reject a bid that passed schema validation; for a bid that may compete, the
 * ad type its markup fits (its macro values are escaped for that type), or undefined when it has
 * no adm (its markup comes from the win notice). `maxPriceMicros` is the bidder's price cap in
 * the reports' currency: above it the bid is rejected, so every price that competes (and every
 * clearing price, never above the winning bid) is a safe integer.
 */
export function checkBid(bid: TextMarkupBid, price: BidPrice, maxPriceMicros: number, imp: ImpRules, request: RequestRules): Rejection | MediaKind | undefined {
  if (!(price.report <= maxPriceMicros)) return { reason: "price-above-max", detail: `price ${bid.price} is above the maximum CPM ${maxPriceMicros / 1e6}` };
  const priceMicros = price.auction;
  if (priceMicros < imp.floorMicros) return { reason: "below-floor", detail: `price ${bid.price} is below the floor ${imp.floorMicros / 1e6}` };
  if (request.badv && bid.adomain) {
    const domain = bid.adomain.find((d) => isDomainBlocked(d, request.badv!));
    if (domain !== undefined) return { reason: "advertiser-blocked", detail: `adomain ${domain} is blocked by badv` };
  }
  if (request.bcat && bid.cat) {
    const cat = bid.cat.find((c) => iab.isBlockedBy(c, request.bcat!));
    if (cat !== undefined) return { reason: "category-blocked", detail: `category ${cat} is blocked by bcat` };
  }
  if (imp.battr && bid.attr) {
    const attr = bid.attr.find((a) => imp.battr!.has(a));
    if (attr !== undefined) return { reason: "attribute-blocked", detail: `creative attribute ${attr} is blocked by battr` };
  }
  if (bid.adm === undefined) return undefined;
  return markupKind(bid.adm, imp.kinds, request.lenient) ?? { reason: "markup-mismatch", detail: `adm is not ${imp.kinds.map(describe).join(" or ")}` };
}

/** What the markup of an ad type must be, for messages. */
export function describe(kind: MediaKind): string {
  return kind === "banner" ? "HTML markup" : kind === "native" ? "a JSON native response" : "a VAST XML document";
}
