/**
 * The body each bidder receives. The exchange changes one field of the caller's bid request —
 * `tmax`, cut by its margin — so it sends the caller's own JSON text with that one number
 * rewritten: every other byte (unknown fields, OpenRTB 2.6 fields, integers above 2^53 in `ext`,
 * number spellings such as `1.0`) reaches the bidder as the caller wrote it, and nothing is
 * serialised on the hot path. When the text cannot be patched with certainty (a bidder buys
 * only some of the imps, or a key named tmax appears more than once anywhere in the text), the
 * request object is serialised with stringifyLossless instead (big integers still intact).
 */
import { parseLossless, stringifyLossless } from "../json/lossless.js";

/** The JSON text a bid request was parsed from (set by parseBidRequestBody). */
export const sourceText: unique symbol = Symbol("adxkit.sourceText");

/** parseLossless, remembering the text on the parsed object (under a symbol: invisible to validators and JSON.stringify). */
export function parseBidRequestBody(text: string): unknown {
  const value = parseLossless(text);
  if (typeof value === "object" && value !== null && !Array.isArray(value)) (value as { [sourceText]?: string })[sourceText] = text;
  return value;
}

/**
 * A key named tmax, at any depth, each letter as itself or as its \u escape (JSON.parse decodes
 * both). On valid JSON this matches keys only: a quote right after `{` or `,` (and white space)
 * cannot be an escaped one, and inside a string it would end the string right before the
 * letters, which valid JSON cannot hold; the closing quote follows a letter or a hex digit, so
 * it is not escaped either.
 */
const tmaxKey = /[{,]\s*"(?:t|\\u0074)(?:m|\\u006[dD])(?:a|\\u0061)(?:x|\\u0078)"\s*:\s*/g;
/** A JSON number token, at a given position. */
const numberToken = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * The caller's text with the top-level tmax set to `tmax`, or undefined when that cannot be
 * done with certainty. `hasTmax` says whether the parsed object has a top-level tmax key.
 */
export function patchTmax(text: string, hasTmax: boolean, tmax: number): string | undefined {
  if (!hasTmax) {
    // No top-level key: add one right after the opening brace (a bid request is never `{}`).
    const open = text.indexOf("{");
    if (open === -1 || /^\s*\}/.test(text.slice(open + 1, open + 64))) return undefined;
    return `${text.slice(0, open + 1)}"tmax":${tmax},${text.slice(open + 1)}`;
  }
  // The top level has one; with exactly one tmax key in the whole text, this is it.
  tmaxKey.lastIndex = 0;
  const first = tmaxKey.exec(text);
  if (first === null || tmaxKey.exec(text) !== null) return undefined;
  const at = first.index + first[0].length;
  numberToken.lastIndex = at;
  const value = numberToken.exec(text);
  if (value === null) return undefined;
  return `${text.slice(0, at)}${tmax}${text.slice(at + value[0].length)}`;
}

/** The body for a bidder that gets `sent` (the request with its tmax, and possibly fewer imps). */
export function forwardedBody<T extends { tmax?: number }>(request: object, sent: T, allImps: boolean): string {
  const text = (request as { [sourceText]?: string })[sourceText];
  if (allImps && text !== undefined && sent.tmax !== undefined) {
    const patched = patchTmax(text, Object.hasOwn(request, "tmax"), sent.tmax);
    if (patched !== undefined) return patched;
  }
  return stringifyLossless(sent);
}
