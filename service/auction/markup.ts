/**
 * Does a bid's ad markup fit the imp's ad type (auction-rejections: markup-mismatch)? Banner
 * takes an HTML snippet, native a JSON native response (bare or wrapped as {"native": …}) that
 * passes validateNativeResponse, video a well-formed XML document whose root element is VAST.
 */
import { XMLValidator } from "fast-xml-parser";
import { validateNativeResponse } from "@adxkit/bindings";
import { TextCache } from "./text-cache.js";

/** The ad types the exchange buys, as the imp offers them. */
export type MediaKind = "banner" | "native" | "video";

/** Something that looks like a tag: `<div`, `</a>`, `<!-- -->`, `<?xml`. */
const htmlTag = /<[A-Za-z!/?][^>]*>/;

/**
 * Banner markup: a string holding at least one tag, and neither a VAST document nor a JSON
 * document (markup of the other ad types also holds tags, in their strings or elements).
 */
export function isHtmlMarkup(adm: string): boolean {
  if (!htmlTag.test(adm)) return false;
  if (rootElementName(adm) === "VAST") return false;
  const start = adm.trimStart()[0];
  if (start === "{" || start === "[") {
    try {
      JSON.parse(adm);
      return false;
    } catch {
      return true;
    }
  }
  return true;
}

/** Native markup: a JSON native response, bare or wrapped as {"native": {...}}. */
export function isNativeMarkup(adm: string, lenient = false): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(adm);
  } catch {
    return false;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
  const inner = (parsed as Record<string, unknown>).native;
  const document = typeof inner === "object" && inner !== null && !Array.isArray(inner) ? inner : parsed;
  return validateNativeResponse(document, { lenient }).valid;
}

/**
 * Name of the first element of an XML document, skipping the prolog (declaration, processing
 * instructions, comments, DOCTYPE). Called only on text XMLValidator accepted.
 */
export function rootElementName(xml: string): string | undefined {
  let i = 0;
  for (;;) {
    while (i < xml.length && /\s/.test(xml[i])) i++;
    if (xml.startsWith("\uFEFF", i)) {
      i++;
      continue;
    }
    if (xml.startsWith("<?", i)) i = xml.indexOf("?>", i) + 2;
    else if (xml.startsWith("<!--", i)) i = xml.indexOf("-->", i) + 3;
    else if (xml.startsWith("<!", i)) i = xml.indexOf(">", i) + 1;
    else break;
    if (i < 2) return undefined;
  }
  if (xml[i] !== "<") return undefined;
  return /^<([A-Za-z_][\w.:-]*)/.exec(xml.slice(i, i + 64))?.[1];
}

/** Video markup: a well-formed XML document (fast-xml-parser's XMLValidator) rooted at VAST. */
export function isVastMarkup(adm: string): boolean {
  if (rootElementName(adm) !== "VAST") return false;
  return XMLValidator.validate(adm) === true;
}

/** Verdicts by markup text, per check: a check costs up to ~0.1 ms, creatives repeat. */
const verdicts = { native: new TextCache<boolean>(), nativeLenient: new TextCache<boolean>(), video: new TextCache<boolean>() };

function cached(cache: TextCache<boolean>, text: string, check: (text: string) => boolean): boolean {
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const verdict = check(text);
  cache.set(text, verdict);
  return verdict;
}

const nativeStrict = (adm: string) => isNativeMarkup(adm, false);
const nativeLenient = (adm: string) => isNativeMarkup(adm, true);

/** The first of the ad types the imp offers that `adm` fits, or undefined (markup-mismatch). */
export function markupKind(adm: string, offered: readonly MediaKind[], lenient = false): MediaKind | undefined {
  for (const kind of offered) {
    if (kind === "banner" && isHtmlMarkup(adm)) return kind;
    if (kind === "native" && (lenient ? cached(verdicts.nativeLenient, adm, nativeLenient) : cached(verdicts.native, adm, nativeStrict))) return kind;
    if (kind === "video" && cached(verdicts.video, adm, isVastMarkup)) return kind;
  }
  return undefined;
}

/** True when `adm` fits one of the ad types the imp offers. */
export function markupFits(adm: string, offered: readonly MediaKind[], lenient = false): boolean {
  return markupKind(adm, offered, lenient) !== undefined;
}
