/**
 * Lossless JSON for the auction body: a bid request is parsed with JSON.parse (so validation,
 * dimensions and the auction see plain numbers, exactly as before), but a number written with 16
 * or more consecutive digits — an integer above 2^53 inside an `ext`, say — also keeps its source
 * text, and `stringifyLossless` writes that text back when the request is forwarded to bidders.
 *
 * Choice, measured (Node 20, 2-core box, bench/payloads/*.json of 1.6–2.4 KB, µs per call):
 *   JSON.parse 5.2–7.7; parseLossless without a long number 6.2–9.7 (1.0–1.6x over several runs:
 *   one regex test and a bracket count); with one 23-digit integer in ext 32–43 (5–7x: a plain
 *   parse, a scan, a parse with a reviver). JSON.stringify of the
 *   forwarded copy 4.5–5.2; stringifyLossless without a long number the same (one property
 *   read); with one 10–12 (2–2.4x).
 * A full lossless parser (lossless-json, or a hand-written one) would pay at least the slow
 * path's JS scan on every auction, while nearly no bid request holds such a number; so the
 * common case pays one regex test (`/\d{16}/`) and then plain JSON.parse/JSON.stringify, and
 * only a body that has 16 consecutive digits somewhere takes the slow path:
 *   1. a scan that skips strings finds the number tokens with 16+ consecutive digits,
 *   2. each is replaced in the text by a string marker holding a per-process random nonce,
 *   3. JSON.parse with a reviver turns each marker back into Number(text) and records the text
 *      on its holder under an enumerable symbol (invisible to JSON.stringify, for-in, Object.keys
 *      and the validators; copied by object spread, so `{ ...request, tmax }` keeps it),
 *   4. stringifyLossless, when the root carries the mark, writes every recorded number whose value
 *      is still Number(text) as that text (a value changed by the exchange is written normally).
 * Limits: a bare number at the top level is not kept (a bid request is an object); spellings
 * JSON.parse cannot tell apart are normalised (`1.0` → `1`, `"\u00e9"` → `"é"`); nesting deeper
 * than MAX_DEPTH is refused (below). The measuring script is in the lead's report (not in the repo).
 * Invalid JSON throws JSON.parse's own error (the text is parsed plainly first on the slow path).
 */
import { randomBytes } from "node:crypto";

/** Source texts of the lossy numbers held by an object or array, by key. */
export const rawNumbers: unique symbol = Symbol("adxkit.rawNumbers");
/** Set on the root of a parsed value that holds at least one lossy number. */
export const hasRawNumbers: unique symbol = Symbol("adxkit.hasRawNumbers");

type Holder = Record<string | symbol, unknown> & { [rawNumbers]?: Record<string, string> };

const nonce = randomBytes(8).toString("hex");
const markerPrefix = `\u0000adxkit-number:${nonce}:`;
const markerJson = `"\\u0000adxkit-number:${nonce}:`;
const markerOut = new RegExp(`"\\\\u0000adxkit-number:${nonce}:(\\d+)"`, "g");

/** Quick test: only a text with 16 consecutive digits can hold a number JSON.parse would round. */
const longDigits = /\d{16}/;
/** Strings (skipped) and JSON number tokens. */
const tokens = /"(?:[^"\\]|\\[\s\S])*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * Deepest nesting accepted. JSON.parse nests without limit, but JSON.stringify recurses: a
 * valid bid request holding `"ext":[[[[…]]]]` 5,000 deep made the exchange's forwarding throw
 * RangeError (HTTP 500). Deeper bodies are refused as not JSON (HTTP 400, rule json); OpenRTB
 * objects nest about 6 deep, extensions rarely more than a few levels more.
 */
export const MAX_DEPTH = 512;

/** How many `[` and `{` the text holds, counted up to MAX_DEPTH + 1 (indexOf is fast: a bid request has a few dozen). */
function openings(text: string): number {
  let n = 0;
  for (let i = text.indexOf("["); i !== -1 && n <= MAX_DEPTH; i = text.indexOf("[", i + 1)) n++;
  for (let i = text.indexOf("{"); i !== -1 && n <= MAX_DEPTH; i = text.indexOf("{", i + 1)) n++;
  return n;
}

/** Throws a SyntaxError when the text nests arrays/objects deeper than MAX_DEPTH (strings skipped). */
function checkDepth(text: string): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \\ */) i++;
        else if (d === 34) break;
      }
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > MAX_DEPTH) throw new SyntaxError(`JSON nests deeper than ${MAX_DEPTH} levels`);
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
}

/** True for a number whose text JSON.parse may round: 16 or more consecutive digits. */
const isLossy = (token: string) => longDigits.test(token);

/** Throws a SyntaxError when the text nests deeper than MAX_DEPTH; almost free for a text that cannot. */
function checkNesting(text: string): void {
  if (text.length > 2 * MAX_DEPTH && openings(text) > MAX_DEPTH) checkDepth(text);
}

/** JSON.parse, refusing nesting deeper than MAX_DEPTH as it refuses any other text that is not JSON (SyntaxError). */
export function parseJsonBounded(text: string): unknown {
  checkNesting(text);
  return JSON.parse(text);
}

/**
 * Parses JSON like JSON.parse (same values, same errors) and remembers the source text of
 * numbers JSON.parse would round, for stringifyLossless.
 */
export function parseLossless(text: string): unknown {
  checkNesting(text);
  if (!longDigits.test(text)) return JSON.parse(text);
  // Valid JSON first: the scan below is linear only when every string is terminated (on
  // `"\"\"\"…` without an end it would rescan from each quote: quadratic in the body size).
  const lossy = JSON.parse(text);
  const raws: string[] = [];
  let rewritten = "";
  let last = 0;
  tokens.lastIndex = 0;
  for (let match = tokens.exec(text); match !== null; match = tokens.exec(text)) {
    const token = match[0];
    if (token.charCodeAt(0) === 34 /* " */ || !isLossy(token)) continue;
    rewritten += text.slice(last, match.index) + markerJson + raws.length + '"';
    last = match.index + token.length;
    raws.push(token);
  }
  if (raws.length === 0) return lossy;
  rewritten += text.slice(last);
  let revived = 0;
  let misplaced = false;
  let result: unknown;
  try {
    result = JSON.parse(rewritten, function (this: Holder, key: string, value: unknown) {
      if (key.startsWith(markerPrefix)) misplaced = true;
      if (typeof value !== "string" || !value.startsWith(markerPrefix)) return value;
      const raw = raws[Number(value.slice(markerPrefix.length))];
      if (raw === undefined) return value;
      revived++;
      (this[rawNumbers] ??= Object.create(null) as Record<string, string>)[key] = raw;
      return Number(raw);
    });
  } catch {
    return lossy; // never expected: the text is valid JSON, and so is its rewriting
  }
  if (misplaced || revived !== raws.length) return lossy;
  if (typeof result === "object" && result !== null) (result as Holder)[hasRawNumbers] = true;
  return result;
}

/** The numbers' source texts recorded on a holder by parseLossless (tests, diagnostics). */
export function rawNumbersOf(holder: object): Readonly<Record<string, string>> | undefined {
  return (holder as Holder)[rawNumbers];
}

/**
 * JSON.stringify that writes the numbers parseLossless recorded digit for digit. A value not
 * parsed by parseLossless (or without such numbers) costs one property read more than
 * JSON.stringify.
 */
export function stringifyLossless(value: unknown): string {
  if (typeof value !== "object" || value === null || (value as Holder)[hasRawNumbers] !== true) return JSON.stringify(value);
  const raws: string[] = [];
  const text = JSON.stringify(value, function (this: Holder, key: string, item: unknown) {
    if (typeof item !== "number") return item;
    const raw = this[rawNumbers]?.[key];
    if (raw === undefined || !Object.is(item, Number(raw))) return item;
    raws.push(raw);
    return `${markerPrefix}${raws.length - 1}`;
  });
  return raws.length === 0 ? text : text.replace(markerOut, (_all, i: string) => raws[Number(i)]);
}
