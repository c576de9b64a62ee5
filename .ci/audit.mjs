#!/usr/bin/env node
// The dependency audit the README states: `npm audit` finds no advisory of severity high or
// critical in the installed tree (dev dependencies included). Exit 1 when it does. When the
// registry will not answer the audit (this workplace's registry answers 405 to its endpoint),
// the audit is reported as skipped, exit 0, unless ADXKIT_AUDIT_REQUIRED=1 (then exit 1).
// `--report FILE` decides on a saved `npm audit --json` report instead of running npm (tests).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

export const AUDIT_LEVEL = "high";
const ORDER = ["info", "low", "moderate", "high", "critical"];

/** The verdict on an `npm audit --json` report: { exit, message }. */
export function verdict(report, required = false) {
  const counts = report?.metadata?.vulnerabilities;
  if (counts === undefined) {
    const why = report?.message ?? report?.error?.summary ?? "no report";
    return { exit: required ? 1 : 0, message: `npm audit: ${required ? "FAILED" : "SKIPPED"}: the registry did not answer the audit (${why})` };
  }
  const atOrAbove = ORDER.slice(ORDER.indexOf(AUDIT_LEVEL)).reduce((sum, level) => sum + (counts[level] ?? 0), 0);
  const summary = ORDER.map((level) => `${level} ${counts[level] ?? 0}`).join(", ");
  if (atOrAbove === 0) return { exit: 0, message: `npm audit: no advisory at ${AUDIT_LEVEL} or above (${summary})` };
  const names = Object.values(report.vulnerabilities ?? {})
    .filter((v) => ORDER.indexOf(v.severity) >= ORDER.indexOf(AUDIT_LEVEL))
    .map((v) => `${v.name} (${v.severity})`);
  return { exit: 1, message: `npm audit: ${atOrAbove} advisories at ${AUDIT_LEVEL} or above: ${names.join(", ")} (${summary})` };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf("--report");
  let text;
  if (at > 0) text = readFileSync(process.argv[at + 1], "utf8");
  else text = spawnSync("npm", ["audit", "--json", `--audit-level=${AUDIT_LEVEL}`], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }).stdout;
  let report;
  try {
    report = JSON.parse(text);
  } catch {
    report = { message: "npm audit printed no JSON" };
  }
  const { exit, message } = verdict(report, process.env.ADXKIT_AUDIT_REQUIRED === "1");
  (exit === 0 ? process.stdout : process.stderr).write(`${message}\n`);
  process.exit(exit);
}
