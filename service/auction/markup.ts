/**
 * Does a bid's ad markup fit the imp's ad type (auction-rejections: markup-mismatch)? Banner
 * takes an HTML snippet, native a JSON native response (bare or wrapped as {"native": …}) that
 * passes validateNativeResponse, video a well-formed XML document whose root element is VAST.
 */
import { XMLValidator } from "fast-xml-parser";
import { validators } from "@adxkit/bindings";
import { embeddedDocument } from "@adxkit/bindings/runtime";
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

const nativeResponse = validators["native-response"];

/**
 * Native markup: a JSON native response, bare or wrapped as {"native": {...}}. Read from the
 * validators' own cache of embedded documents: the bid response's rule native-markup-json has
 * parsed and validated the same text already (once per text, not once per check).
 */
export function isNativeMarkup(adm: string, lenient = false): boolean {
  return embeddedDocument("native-response", adm, nativeResponse, lenient)?.valid === true;
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

/** VAST verdicts by markup text: a check costs up to ~0.1 ms, creatives repeat (native ones are cached by the validators). */
const vastVerdicts = new TextCache<boolean>();

function isCachedVast(adm: string): boolean {
  const hit = vastVerdicts.get(adm);
  if (hit !== undefined) return hit;
  const verdict = isVastMarkup(adm);
  vastVerdicts.set(adm, verdict);
  return verdict;
}

/** The first of the ad types the imp offers that `adm` fits, or undefined (markup-mismatch). */
export function markupKind(adm: string, offered: readonly MediaKind[], lenient = false): MediaKind | undefined {
  for (const kind of offered) {
    if (kind === "banner" && isHtmlMarkup(adm)) return kind;
    if (kind === "native" && isNativeMarkup(adm, lenient)) return kind;
    if (kind === "video" && isCachedVast(adm)) return kind;
  }
  return undefined;
}

/** True when `adm` fits one of the ad types the imp offers. */
export function markupFits(adm: string, offered: readonly MediaKind[], lenient = false): boolean {
  return markupKind(adm, offered, lenient) !== undefined;
}
