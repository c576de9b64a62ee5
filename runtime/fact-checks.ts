/**
 * The checks a report fact's fields pass before the store keeps them (the generated
 * `factProblem` of `@adxkit/bindings/reports` calls them, one per field as the report model
 * declares it): each kind's fast test, and the check that says why a value is refused.
 */
import { hourMillis } from "./hour.js";

const INT32_MAX = 2_147_483_647;

/** Hours already found valid; bounded, since a load rarely spans more than a few thousand hours. */
const validHours: Set<string> = /* @__PURE__ */ new Set<string>();
/** The last of them: facts mostly come hour by hour, and a comparison costs a fraction of a lookup. */
let lastValidHour: string | undefined;

/** Whether `text` is a real UTC hour `YYYY-MM-DDThh:00:00`. */
export function validHour(text: unknown): boolean {
  if (typeof text !== "string") return false;
  if (text === lastValidHour) return true;
  if (!validHours.has(text)) {
    if (hourMillis(text) === undefined) return false;
    if (validHours.size >= 100_000) validHours.clear();
    validHours.add(text);
  }
  lastValidHour = text;
  return true;
}

/**
 * Whether `text` is at most `max` characters, counted as JSON Schema's maxLength counts them (code
 * points: a character outside the BMP is one), so that what a request's validator lets through,
 * the store keeps. Its UTF-16 length decides unless that is over the limit.
 */
export function withinLength(text: string, max: number): boolean {
  if (text.length <= max) return true;
  if (text.length > 2 * max) return false;
  let characters = 0;
  for (const _ of text) if (++characters > max) return false;
  return true;
}

/** A count: a safe non-negative integer. */
export const isCount = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
/** A code of a code list: a non-negative 32-bit integer. */
export const isCode = (v: unknown): boolean => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= INT32_MAX;
/** An amount of money: a finite number ≥ 0. */
export const isMoney = (v: unknown): boolean => typeof v === "number" && Number.isFinite(v) && v >= 0;

/** Why a field's value is refused, or undefined. */
export type FieldCheck = (value: unknown) => string | undefined;

export const hourCheck: FieldCheck = (v) => (validHour(v) ? undefined : 'must be a real UTC hour "YYYY-MM-DDThh:00:00"');
export const codeCheck: FieldCheck = (v) => (isCode(v) ? undefined : "must be a non-negative integer code");
export const countCheck: FieldCheck = (v) => (isCount(v) ? undefined : "must be a non-negative integer");
export const moneyCheck: FieldCheck = (v) => (isMoney(v) ? undefined : "must be a finite number ≥ 0 (USD)");
/** Only the shape of a text field (what a key must be to read at all; its rules are checked apart). */
export const stringCheck: FieldCheck = (v) => (typeof v === "string" ? undefined : "must be a string");

/** The check of a text field: empty allowed or not, its longest length, the pattern it matches. */
export function textCheck(o: { empty: boolean; max?: number; pattern?: string }): FieldCheck {
  const pattern = o.pattern === undefined ? undefined : new RegExp(o.pattern);
  return (v) => {
    if (typeof v !== "string") return "must be a string";
    if (v === "") return o.empty ? undefined : "must not be empty";
    if (o.max !== undefined && !withinLength(v, o.max)) return `must be at most ${o.max} characters`;
    if (pattern && !pattern.test(v)) return `must match ${o.pattern}${o.empty ? ' or be ""' : ""}`;
    return undefined;
  };
}
