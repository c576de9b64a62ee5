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

export function errorEnvelope(code: number, detail?: string, now?: Date): ReportEnvelope {
  const status: ReportEnvelope["status"] = { code, msg: reportStatusMessage(code) };
  if (detail) status.detail = detail;
  return { timestamp: envelopeTimestamp(now), status, data: null };
}
