/**
 * Reading and checking facts: one NDJSON line → one `Fact`, or a `FactError` saying why not. The
 * checks and the fact-key versions are generated from spec/report-model.yaml
 * (generated/reports/facts.ts); a line may say its fact-key version as `"v"`.
 */
import { factFromRecord, factProblem, hourMillis, reportLimits, withinLength } from "@adxkit/bindings/reports";
import { FactError } from "./errors.js";
import type { Fact } from "./store.js";

export { factProblem, hourMillis };

/**
 * Longest identifier accepted, in characters (spec: report-model.yaml limits max-id-length);
 * longer ones are garbage, not ids. The bid request fields that become dimensions have it as
 * their maxLength.
 */
export const MAX_ID_LENGTH: number = reportLimits.maxIdLength;

/** Whether `text` is at most MAX_ID_LENGTH characters, counted as JSON Schema's maxLength counts them (code points). */
export const withinIdLength = (text: string): boolean => withinLength(text, MAX_ID_LENGTH);

/** Milliseconds since the epoch as `YYYY-MM-DDThh:mm:ss`. */
export function formatHour(millis: number): string {
  return new Date(millis).toISOString().slice(0, 19);
}

/** One hour in milliseconds. */
export const hourMs = 3_600_000;

/** Checks a value (of its fact-key version `v`, the current one when absent) and copies its fields into a clean `Fact`; throws `FactError`. */
export function toFact(value: unknown, line: number): Fact {
  const fact = factFromRecord(value);
  if (typeof fact === "string") throw new FactError(line, fact);
  return fact;
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
