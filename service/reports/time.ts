/** Report times: `YYYY-MM-DDThh:mm:ss` in UTC, the one-month limit, and the envelope's timestamp. */

const weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number) => String(n).padStart(2, "0");

/** Reads a report time (already validated as `report-time`) as UTC milliseconds. */
export function reportTimeMillis(text: string): number {
  return Date.parse(`${text}Z`);
}

/** Formats UTC milliseconds as a report time. */
export function formatReportTime(millis: number): string {
  return new Date(millis).toISOString().slice(0, 19);
}

/**
 * start plus `months` calendar months, the day clamped to the target month's length
 * (2026-01-31T00:00:00 + 1 month = 2026-02-28T00:00:00), time of day kept.
 */
export function addMonthsClamped(start: string, months: number): string {
  const date = new Date(reportTimeMillis(start));
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(date.getUTCDate(), lastDay);
  return formatReportTime(Date.UTC(year, month, day, date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()));
}

/** The envelope's timestamp, e.g. `Sun Nov 22 09:26:42 +0000 2026`. */
export function envelopeTimestamp(now: Date = new Date()): string {
  return `${weekdays[now.getUTCDay()]} ${months[now.getUTCMonth()]} ${two(now.getUTCDate())} ${two(now.getUTCHours())}:${two(now.getUTCMinutes())}:${two(now.getUTCSeconds())} +0000 ${now.getUTCFullYear()}`;
}
