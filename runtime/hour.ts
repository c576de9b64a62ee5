/**
 * The report hour's text, `YYYY-MM-DDThh:00:00` (UTC), as the fact checks and the fact-key
 * codec's binary form read it (the generated `@adxkit/bindings/reports` re-exports it).
 */

const HOUR_PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):00:00$/;

/**
 * `YYYY-MM-DDThh:00:00` (a real UTC hour, years 1970–9999) as milliseconds since the epoch, or
 * undefined when the text is not one.
 */
export function hourMillis(text: string): number | undefined {
  const m = HOUR_PATTERN.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
  if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23) return undefined;
  const millis = Date.UTC(year, month - 1, day, hour);
  // Date.UTC rolls 2026-02-30 over into March: a real day must come back unchanged.
  return new Date(millis).getUTCDate() === day ? millis : undefined;
}
