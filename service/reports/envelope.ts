/** The report envelope of part 2.2: every answer of A and B, success or error, with HTTP 200. */
import { reportStatusMessage, ReportStatusCode } from "@adxkit/bindings";
import type { ReportRow } from "../store/store.js";
import { envelopeTimestamp } from "./time.js";

export interface ReportEnvelope {
  timestamp: string;
  status: { code: number; msg: string; detail?: string };
  data: { total: number; data: ReportRow[] } | null;
}

export function successEnvelope(total: number, rows: ReportRow[], now?: Date): ReportEnvelope {
  return { timestamp: envelopeTimestamp(now), status: { code: ReportStatusCode.Success, msg: reportStatusMessage(0) }, data: { total, data: rows } };
}

const CLOSE = new TextEncoder().encode("}}");

/**
 * The success envelope as JSON around rows that are JSON already (the store's `reportJson`), as
 * text, or as UTF-8 chunks around the rows' own bytes: a heavy report is sent without parsing or
 * building its rows, nor copying its megabytes into one buffer with the envelope.
 */
export function successEnvelopeJson(total: number, rowsJson: string | Uint8Array, now?: Date): string | Uint8Array[] {
  const head = JSON.stringify({ timestamp: envelopeTimestamp(now), status: { code: ReportStatusCode.Success, msg: reportStatusMessage(0) } });
  const before = `${head.slice(0, -1)},"data":{"total":${JSON.stringify(total)},"data":`;
  if (typeof rowsJson === "string") return `${before}${rowsJson}}}`;
  return [Buffer.from(before, "utf8"), rowsJson, CLOSE];
}

export function errorEnvelope(code: number, detail?: string, now?: Date): ReportEnvelope {
  const status: ReportEnvelope["status"] = { code, msg: reportStatusMessage(code) };
  if (detail) status.detail = detail;
  return { timestamp: envelopeTimestamp(now), status, data: null };
}
