/**
 * Formats used by the spec's schemas. The precompiled validators import this module
 * (ajv's standalone output references `formats[...]`), so it must stay dependency-free ESM
 * (Node's built-in modules only).
 */
import { isIP } from "node:net";

const reportTimePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** `YYYY-MM-DDThh:mm:ss`, a real calendar time (no 2026-02-30, no 24:00:00), read as UTC. */
export function isReportTime(value: string): boolean {
  const match = reportTimePattern.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= daysInMonth;
}

/** A dotted-quad IPv4 address (`123.145.167.0`; no wildcard, no leading zeros): Node's own check. */
export function isIPv4(value: string): boolean {
  return isIP(value) === 4;
}

/** An IPv6 address in text form (RFC 4291 2.2, `::` shortening and a trailing IPv4 part allowed): Node's own check. */
export function isIPv6(value: string): boolean {
  return isIP(value) === 6;
}

/** Format definitions as ajv takes them; the precompiled code calls `formats[name].validate`. */
export const formats = {
  "report-time": { type: "string", validate: isReportTime },
  ipv4: { type: "string", validate: isIPv4 },
  ipv6: { type: "string", validate: isIPv6 },
} as const;
