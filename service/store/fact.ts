/** Reading and checking facts: one NDJSON line → one `Fact`, or a `FactError` saying why not. */
import { reportLimits } from "@adxkit/bindings";
import { FactError } from "./errors.js";
import type { Fact } from "./store.js";

const HOUR_MS = 3_600_000;
const hourPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):00:00$/;
const countryPattern = /^[A-Z]{3}$/;
/**
 * Longest identifier accepted, in characters (spec: report-limits max-id-length); longer ones are
 * garbage, not ids. The bid request fields that become dimensions have it as their maxLength.
 */
export const MAX_ID_LENGTH: number = reportLimits.maxIdLength;
const INT32_MAX = 2_147_483_647;

/**
 * Whether `text` is at most MAX_ID_LENGTH characters, counted as JSON Schema's maxLength counts
 * them (code points: a character outside the BMP is one), so that whatever the bid request's
 * validator lets through, the store keeps. UTF-16 length decides unless it is over the limit.
 */
export function withinIdLength(text: string): boolean {
  if (text.length <= MAX_ID_LENGTH) return true;
  if (text.length > 2 * MAX_ID_LENGTH) return false;
  let characters = 0;
  for (const _ of text) if (++characters > MAX_ID_LENGTH) return false;
  return true;
}

/**
 * `YYYY-MM-DDThh:00:00` (a real UTC hour, years 1970–9999) as milliseconds since the epoch,
 * or undefined when the text is not one.
 */
export function hourMillis(text: string): number | undefined {
  const m = hourPattern.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
  if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23) return undefined;
  const millis = Date.UTC(year, month - 1, day, hour);
  // Date.UTC rolls 2026-02-30 over into March: a real day must come back unchanged.
  if (new Date(millis).getUTCDate() !== day) return undefined;
  return millis;
}

/** Milliseconds since the epoch as `YYYY-MM-DDThh:mm:ss`. */
export function formatHour(millis: number): string {
  return new Date(millis).toISOString().slice(0, 19);
}

/** One hour in milliseconds. */
export const hourMs = HOUR_MS;

type Check = (value: unknown) => string | undefined;

const count: Check = (v) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? undefined : "must be a non-negative integer");
const code: Check = (v) => (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= INT32_MAX ? undefined : "must be a non-negative integer code");
const money: Check = (v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? undefined : "must be a finite number ≥ 0 (USD)");
const id: Check = (v) =>
  typeof v !== "string" ? "must be a string" : v.length === 0 ? "must not be empty" : !withinIdLength(v) ? `must be at most ${MAX_ID_LENGTH} characters` : undefined;
// The interface document says publisher_id "may be an empty string"; the exchange writes "" for
// every dimension a bid request leaves out (no tagid, no app.bundle, no device.geo.country).
const idOrEmpty: Check = (v) => (typeof v !== "string" ? "must be a string" : !withinIdLength(v) ? `must be at most ${MAX_ID_LENGTH} characters` : undefined);
const country: Check = (v) => (typeof v === "string" && (v === "" || countryPattern.test(v)) ? undefined : 'must be an ISO 3166-1 alpha-3 code (three capital letters) or ""');
const dateHour: Check = (v) => (typeof v === "string" && hourMillis(v) !== undefined ? undefined : 'must be a real UTC hour "YYYY-MM-DDThh:00:00"');

const metricChecks: [string, Check][] = [
  ["request", count],
  ["response", count],
  ["impression", count],
  ["revenue", money],
];

/** The fields of each side, in the order problems are reported. */
const fieldChecks: Record<Fact["side"], [string, Check][]> = {
  supply: [
    ["date_hour", dateHour],
    ["publisher_id", idOrEmpty],
    ["app_bundle_id", idOrEmpty],
    ["placement_id", idOrEmpty],
    ["ad_format", code],
    ["platform", code],
    ["country", country],
    ...metricChecks,
  ],
  demand: [["date_hour", dateHour], ["bidder_id", id], ["ad_format", code], ["platform", code], ...metricChecks],
};

/** Hours already found valid; bounded, since a load rarely spans more than a few thousand hours. */
const validHours = new Set<string>();

function validHour(text: unknown): boolean {
  if (typeof text !== "string") return false;
  if (validHours.has(text)) return true;
  if (hourMillis(text) === undefined) return false;
  if (validHours.size >= 100_000) validHours.clear();
  validHours.add(text);
  return true;
}

const isCount = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isCode = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= INT32_MAX;
const isId = (v: unknown) => typeof v === "string" && v.length > 0 && withinIdLength(v);
const isIdOrEmpty = (v: unknown) => typeof v === "string" && withinIdLength(v);

/**
 * The common case, checked inline: loads call this once per fact, millions of times, and the
 * table-driven walk below costs several times more. It must accept exactly what that walk accepts.
 */
function isValidFact(r: Record<string, unknown>): boolean {
  const metricsOk =
    isCount(r.request) && isCount(r.response) && isCount(r.impression) && typeof r.revenue === "number" && Number.isFinite(r.revenue) && r.revenue >= 0;
  if (!metricsOk || !isCode(r.ad_format) || !isCode(r.platform) || !validHour(r.date_hour)) return false;
  if (r.side === "supply") {
    return (
      isIdOrEmpty(r.publisher_id) &&
      isIdOrEmpty(r.app_bundle_id) &&
      isIdOrEmpty(r.placement_id) &&
      typeof r.country === "string" &&
      (r.country === "" || countryPattern.test(r.country))
    );
  }
  return r.side === "demand" && isId(r.bidder_id);
}

/**
 * Why a value is not a fact, or undefined when it is one. Unknown fields are ignored
 * (the spec convention: unknown fields are accepted everywhere).
 */
export function factProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  if (isValidFact(value as Record<string, unknown>)) return undefined;
  const record = value as Record<string, unknown>;
  const side = record.side;
  if (side !== "supply" && side !== "demand") {
    return side === undefined ? 'missing field "side"' : `unknown side ${JSON.stringify(side)} (expected "supply" or "demand")`;
  }
  for (const [name, check] of fieldChecks[side]) {
    const field = record[name];
    if (field === undefined) return `missing field "${name}"`;
    const problem = check(field);
    if (problem) return `field "${name}" ${problem}`;
  }
  return undefined;
}

/** Checks a value and copies the fields of its side into a clean `Fact`; throws `FactError`. */
export function toFact(value: unknown, line: number): Fact {
  const problem = factProblem(value);
  if (problem) throw new FactError(line, problem);
  const r = value as Fact;
  const metrics = { request: r.request, response: r.response, impression: r.impression, revenue: r.revenue };
  if (r.side === "demand") {
    return { side: "demand", date_hour: r.date_hour, bidder_id: r.bidder_id, ad_format: r.ad_format, platform: r.platform, ...metrics };
  }
  return {
    side: "supply",
    date_hour: r.date_hour,
    publisher_id: r.publisher_id,
    app_bundle_id: r.app_bundle_id,
    placement_id: r.placement_id,
    ad_format: r.ad_format,
    platform: r.platform,
    country: r.country,
    ...metrics,
  };
}

/** Parses one NDJSON line into a fact; throws `FactError {line, reason}`. */
export function parseFactLine(line: string, lineNo: number): Fact {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new FactError(lineNo, "not valid JSON");
  }
  return toFact(value, lineNo);
}
