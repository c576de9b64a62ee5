/**
 * The report operations of A and B on top of the generated stubs: credentials (-3), then
 * parameters (-2), then the range (-4), then the legacy start (-5), then the query. The order
 * is spec/errors.yaml's report-status-precedence.
 */
import type { FastifyBaseLogger } from "fastify";
import { ReportStatusCode, type DemandReportRequest, type SupplyReportRequest, type ValidationIssue } from "@adxkit/bindings";
import type { DemandReportHandlers, OperationInput, OperationOutput, SupplyReportHandlers } from "@adxkit/bindings/fastify";
import type { AuthThrottle } from "../accounts/throttle.js";
import { reportLimits, reportModel } from "@adxkit/bindings/reports";
import type { Account, Dimension, Metric, ReportQuery, ReportStore, Side } from "../store/store.js";
import { errorEnvelope, successEnvelopeJson, type ReportEnvelope } from "./envelope.js";
import { addMonthsClamped } from "./time.js";
import type { WarmUpAccess } from "./warm-up.js";

/** A report request of either interface, validated. */
type ReportRequest = DemandReportRequest | SupplyReportRequest;

export interface ReportServiceOptions {
  store: ReportStore;
  /** Slows down repeated failed credentials from one address or against one userid (service/accounts/throttle.ts). */
  authThrottle?: AuthThrottle;
  now?: () => Date;
  /** The warm-up's made-up account, allowed while the server warms its report route before listening (warm-up.ts). */
  warmUp?: WarmUpAccess;
}

const ok = (body: ReportEnvelope): OperationOutput => ({ status: 200, body });
const okJson = (text: string | Uint8Array[]): OperationOutput => ({ status: 200, body: text, headers: { "content-type": "application/json; charset=utf-8" } });

function describeIssues(issues: readonly ValidationIssue[]): string {
  const shown = issues.slice(0, 3).map((i) => `${i.path || "/"}: ${i.message}`);
  return shown.join("; ") + (issues.length > 3 ? `; and ${issues.length - 3} more` : "");
}

/** De-duplicates names, keeping the order of first mention. */
function unique<T>(values: readonly T[] | undefined): T[] {
  return [...new Set(values ?? [])];
}

/** Turns a validated request body into the store's query for one account. */
export function reportQuery(side: Side, account: Account, body: ReportRequest): ReportQuery {
  const metrics = unique<Metric>(body.metrics);
  const filters: ReportQuery["filters"] = {};
  for (const name of reportModel.sides[side].filters) {
    const given = (body as Record<string, unknown>)[name];
    if (Array.isArray(given) && given.length > 0) filters[name] = unique(given as (string | number)[]);
  }
  return {
    side,
    start: body.start,
    end: body.end,
    metrics: metrics.length > 0 ? metrics : ([...reportLimits.defaultMetrics] as Metric[]),
    dimensions: unique<Dimension>(body.dimensions as Dimension[] | undefined),
    filters,
    limit: body.limit ?? reportLimits.limitDefault,
    scope: side === "demand" ? { bidder_id: account.bidder_id ?? "" } : { publisher_ids: account.publisher_ids ?? [] },
  };
}

/**
 * Checks a report request's credentials through the throttle: the account, or why not (-3).
 * Every path that checks report credentials goes through here, also a request Fastify refused
 * before its route ran (service/app.ts).
 */
export async function authenticateReport(
  options: ReportServiceOptions,
  side: Side,
  credentials: { userid?: string; authorization?: string },
  address: string,
): Promise<{ account: Account } | { refused: string }> {
  const source = { address, userid: credentials.userid };
  if (options.authThrottle?.blocked(source)) return { refused: "too many failed credentials from this address or for this userid; retry later" };
  const { userid, authorization } = credentials;
  // Only before the server listens, with credentials made up for it (warm-up.ts).
  const warm = options.warmUp?.current;
  if (warm !== undefined && userid === warm.userid && authorization === warm.authorization && side === warm.account.side) return { account: warm.account };
  const account = userid && authorization ? await options.store.verifyCredentials(userid, authorization) : null;
  if (account && account.side === side) return { account };
  // A right pair of the other side guessed nothing: it counts against the address only.
  options.authThrottle?.failed(account ? { address } : source);
  return { refused: !userid || !authorization ? "x-userid and x-authorization are required" : `no ${side} account has these credentials` };
}

/** Answers one report request; never throws. */
export async function answerReport(side: Side, input: OperationInput<ReportRequest>, options: ReportServiceOptions): Promise<OperationOutput> {
  const now = options.now?.();
  const log = input.request.log as FastifyBaseLogger;
  try {
    const checked = await authenticateReport(options, side, input.credentials, input.request.ip);
    if ("refused" in checked) return ok(errorEnvelope(ReportStatusCode.Unauthorized, checked.refused, now));
    const { account } = checked;

    if (!input.validation.valid) return ok(errorEnvelope(ReportStatusCode.InvalidParams, describeIssues(input.validation.errors), now));
    const body = input.payload;
    const restricted: readonly string[] = reportModel.sides[side].restrictedDimensions;
    const denied = (body.dimensions ?? []).find((d) => restricted.includes(d));
    if (denied && !account.placement_dimensions) {
      return ok(errorEnvelope(ReportStatusCode.InvalidParams, `dimension ${denied} is available only to accounts with placement dimensions`, now));
    }
    if (body.end > addMonthsClamped(body.start, reportLimits.maxRangeMonths)) {
      return ok(errorEnvelope(ReportStatusCode.RangeTooLong, `end is later than ${addMonthsClamped(body.start, reportLimits.maxRangeMonths)}`, now));
    }
    if (side === "supply" && account.legacy && body.start < reportLimits.legacyEarliestStart) {
      return ok(errorEnvelope(ReportStatusCode.LegacyStartTooEarly, `start must be at or after ${reportLimits.legacyEarliestStart}`, now));
    }
    // The rows stay JSON text from the store to the socket: no object per row on the event loop.
    const result = await options.store.reportJson(reportQuery(side, account, body));
    // The rows' buffer serves a later report once this answer is written out in full.
    return { ...okJson(successEnvelopeJson(result.total, result.rowsJson, now)), sent: result.release };
  } catch (error) {
    log.error({ err: error, operation: input.operationId }, "report failed");
    return ok(errorEnvelope(ReportStatusCode.SystemError, `internal error; request id ${input.request.id}`, now));
  }
}

export function demandReportHandlers(options: ReportServiceOptions): DemandReportHandlers {
  return {
    getDemandReport: (input) => answerReport("demand", input, options),
    postDemandReport: (input) => answerReport("demand", input, options),
  };
}

export function supplyReportHandlers(options: ReportServiceOptions): SupplyReportHandlers {
  return { postSupplyReport: (input) => answerReport("supply", input, options) };
}
