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

/**
 * The success envelope as JSON text around rows that are JSON text already (the store's
 * `reportJson`): a heavy report is sent without parsing or building its rows.
 */
export function successEnvelopeJson(total: number, rowsJson: string, now?: Date): string {
  const head = JSON.stringify({ timestamp: envelopeTimestamp(now), status: { code: ReportStatusCode.Success, msg: reportStatusMessage(0) } });
  return `${head.slice(0, -1)},"data":{"total":${JSON.stringify(total)},"data":${rowsJson}}}`;
}

export function errorEnvelope(code: number, detail?: string, now?: Date): ReportEnvelope {
  const status: ReportEnvelope["status"] = { code, msg: reportStatusMessage(code) };
  if (detail) status.detail = detail;
  return { timestamp: envelopeTimestamp(now), status, data: null };
}
