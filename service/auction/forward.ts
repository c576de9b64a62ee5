/**
 * The body each bidder receives. The exchange changes one field of the caller's bid request —
 * `tmax`, cut by its margin — so it sends the caller's own JSON text with that one number
 * rewritten: every other byte (unknown fields, OpenRTB 2.6 fields, integers above 2^53 in `ext`,
 * number spellings such as `1.0`) reaches the bidder as the caller wrote it, and nothing is
 * serialised on the hot path. When the text cannot be patched with certainty (a bidder buys
 * only some of the imps, or a key named tmax appears more than once anywhere in the text), the
 * caller's text is parsed again losslessly (service/json/lossless.ts) and serialised with those
 * changes, big integers intact. So the request is parsed with plain JSON.parse: the lossless
 * parse, five to seven times slower on a text with a run of 16 digits (a long numeric id in a
 * string is enough), is paid only on that rare path.
 */
import { parseJsonBounded, parseLossless, stringifyLossless } from "../json/lossless.js";

/** The JSON text a bid request was parsed from (set by parseBidRequestBody). */
export const sourceText: unique symbol = Symbol("adxkit.sourceText");

/** JSON.parse (nesting bounded), remembering the text on the parsed object (under a symbol: invisible to validators and JSON.stringify). */
export function parseBidRequestBody(text: string): unknown {
  const value = parseJsonBounded(text);
  if (typeof value === "object" && value !== null && !Array.isArray(value)) (value as { [sourceText]?: string })[sourceText] = text;
  return value;
}

/** A JSON number token, at a given position. */
const numberToken = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** What follows a tmax key up to its value, at a given position. */
const afterKey = /\s*:\s*/y;
const space = /\s/;
/**
 * A key named tmax, at any depth: `{` or `,`, white space, `"`, the four letters each as itself
 * or as its \u escape (JSON.parse decodes both; the m's hex digit in either case), `"`, white
 * space, `:`. On valid JSON this finds keys only: a quote right after `{` or `,` (and white space)
 * cannot be an escaped one, and inside a string it would end the string right before the
 * letters, which valid JSON cannot hold; the closing quote follows a letter or a hex digit, so it
 * is not escaped either. The letters here are last first: a key is read backwards from its end.
 * An escape ends in a digit or d/D, never in its letter, so a reading is never ambiguous.
 */
const keyLetters: readonly (readonly string[])[] = [["x", "\\u0078"], ["a", "\\u0061"], ["m", "\\u006d", "\\u006D"], ["t", "\\u0074"]];

/**
 * Where the tmax key (keyLetters) whose closing quote is at `close` is followed by its value, or
 * -1 when no such key ends there: the key's letters read backwards, its opening quote, white space,
 * then `{` or `,`; forwards, the colon.
 */
function tmaxKeyEndingAt(text: string, close: number): number {
  let at = close;
  for (const spellings of keyLetters) {
    const spelling = spellings.find((s) => s.length <= at && text.startsWith(s, at - s.length));
    if (spelling === undefined) return -1;
    at -= spelling.length;
  }
  if (text.charCodeAt(at - 1) !== 0x22 /* " */) return -1;
  let start = at - 1;
  while (start > 0 && space.test(text[start - 1])) start--;
  const before = text.charCodeAt(start - 1);
  if (before !== 0x7b /* { */ && before !== 0x2c /* , */) return -1;
  afterKey.lastIndex = close + 1;
  return afterKey.exec(text) === null ? -1 : afterKey.lastIndex;
}

/**
 * Where the value of the text's only tmax key starts, or -1 when it has none
 * or more than one. Found from the key's end, `x"` or `\u0078"`: in a bid request those are a few
 * places, where a regular expression starting at `{` or `,` tries each of those (about 1 µs of a
 * bid request, and it had to run twice to see that a second key is not there).
 */
function onlyTmaxValueAt(text: string): number {
  let found = -1;
  let matches = 0;
  const consider = (close: number) => {
    const end = tmaxKeyEndingAt(text, close);
    if (end !== -1 && ++matches === 1) found = end;
  };
  for (let x = text.indexOf('x"'); x !== -1 && matches < 2; x = text.indexOf('x"', x + 2)) consider(x + 1);
  for (let eight = text.indexOf('8"'); eight !== -1 && matches < 2; eight = text.indexOf('8"', eight + 2)) consider(eight + 1);
  return matches === 1 ? found : -1;
}

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
  const at = onlyTmaxValueAt(text);
  if (at === -1) return undefined;
  numberToken.lastIndex = at;
  const value = numberToken.exec(text);
  if (value === null) return undefined;
  return `${text.slice(0, at)}${tmax}${text.slice(at + value[0].length)}`;
}

/**
 * The body for a bidder that gets `imps` (undefined: all of them) with `tmax`. `request` is the
 * parsed caller's request; without its source text (not parsed by parseBidRequestBody) it is
 * serialised as it is.
 */
export function forwardedBody(request: { imp: readonly { id: string }[] }, imps: readonly { id: string }[] | undefined, tmax: number): string {
  const text = (request as { [sourceText]?: string })[sourceText];
  if (text === undefined) return stringifyLossless({ ...request, ...(imps && { imp: imps }), tmax });
  if (imps === undefined) {
    const patched = patchTmax(text, Object.hasOwn(request, "tmax"), tmax);
    if (patched !== undefined) return patched;
  }
  const lossless = parseLossless(text) as { imp: { id: string }[] };
  const ids = imps && new Set(imps.map((imp) => imp.id));
  return stringifyLossless({ ...lossless, ...(ids && { imp: lossless.imp.filter((imp) => ids.has(imp.id)) }), tmax });
}
