/**
 * A bidder's answer as it arrives: parsed, validated against the request that bidder received,
 * each problem charged to the bid, seat or whole answer it points into, each bid checked
 * (notice origins, price, floor, blocks, markup); valid bids join their imp's candidates. The
 * circuit breaker learns whether the answer was a fault.
 */
import { auctionRejectionOfRule, auctionRules, validateBidResponse, type AuctionRejection, type Bid, type BidRequest, type Normalisation, type ValidationResult } from "@adxkit/bindings";
import { RESPONSE, bidderFault, isObject, rejectBid, type AuctionContext, type AuctionEnv, type BidderRuntime } from "./auction-context.js";
import { checkBid, type Rejection, type TextMarkupBid } from "./bid-checks.js";
import type { CallOutcome } from "./http-client.js";
import { toMicros } from "./money.js";
import type { NoticeOrigins } from "./notice-origins.js";

/** A path into a bid; group 3 when it points inside the bid's markup (the native response's own issues). */
const bidPath = /^\/seatbid\/(\d+)\/bid\/(\d+)(?:(\/adm\/)|\/|$)/;
const seatPath = /^\/seatbid\/(\d+)(?:\/|$)/;

/** Bidder answers are validated without the recommended fields (most real answers lack some). */
const STRICT_ANSWER = Object.freeze({ lenient: false, recommended: false });
const LENIENT_ANSWER = Object.freeze({ lenient: true, recommended: false });

/**
 * One bidder's outcome: its bids join the auction, and the circuit breaker learns whether it
 * was a fault. `budgetMs` is the time the bidder had: the caller sets it through tmax, so a
 * timeout within less than the bidder needs (its timeout_ms, else the floor) is not the
 * bidder's fault and is not charged (else twelve auctions with tmax 1 switched every bidder off).
 * Nor is a timeout whose deadline the exchange saw `lateMs` > breaker-slip-ms late: its loop was
 * behind (due timers run before sockets are read, so the answer may be waiting unread), and an
 * overloaded exchange opened every circuit and ran its auctions without bidders.
 */
export function answerArrived(env: AuctionEnv, context: AuctionContext, bidder: BidderRuntime, sent: BidRequest, outcome: CallOutcome, budgetMs: number, lateMs: number): void {
  const faultsBefore = bidder.faultCount;
  try {
    takeAnswer(env, context, bidder, sent, outcome);
    if (bidder.faultCount === faultsBefore) bidder.breaker?.success();
    else if (outcome.kind === "fault" && outcome.reason === "timeout" && (budgetMs < bidder.breakerTimeoutMs || lateMs > auctionRules.breakerSlipMs)) {
      bidder.counters.timeoutsNotCharged++;
      bidder.breaker?.inconclusive();
    } else bidder.breaker?.failure();
  } catch (error) {
    // A bug while checking one answer costs that answer, never the auction.
    env.logger.error({ err: error, auction: context.request.id, bidder: bidder.config.id }, "checking a bidder answer failed");
    env.counters.rejection(bidder.config.id, "invalid-response");
  }
}

/** Checks one bidder's answer as it arrives; valid bids join their imp's candidates. */
function takeAnswer(env: AuctionEnv, context: AuctionContext, bidder: BidderRuntime, sent: BidRequest, outcome: CallOutcome): void {
  const id = bidder.config.id;
  if (outcome.kind === "fault") return bidderFault(env, context, bidder, outcome.reason, outcome.detail);
  if (outcome.kind === "no-bid") {
    bidder.counters.noBids++;
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(outcome.text);
  } catch (error) {
    return bidderFault(env, context, bidder, "malformed-response", `body is not JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) return bidderFault(env, context, bidder, "malformed-response", "body is not a JSON object");
  let response: Record<string, any> = parsed;
  let validation: ValidationResult | undefined;
  if (env.lenient) {
    // The answer as the validator repaired it (another id, an empty seatbid, cur ""): the exchange acts on that one answer.
    validation = validateBidResponse(response, sent, LENIENT_ANSWER);
    if (validation.normalisations !== undefined) {
      lenientChanges(env, context, bidder, response, validation.normalisations);
      response = validation.payload as Record<string, any>;
      // What is left to reject is located in the repaired answer, whose bids may have moved.
      if (!validation.valid) validation = validateBidResponse(response, sent, LENIENT_ANSWER);
    }
  }
  if (response.id !== sent.id) {
    return bidderFault(env, context, bidder, "wrong-request-id", `response id ${JSON.stringify(response.id)} is not the request id ${JSON.stringify(sent.id)}`);
  }
  bidder.counters.answers++;
  if (response.seatbid === undefined || (Array.isArray(response.seatbid) && response.seatbid.length === 0)) {
    bidder.counters.noBids++;
    return;
  }

  // Validation problems are attributed to the bid, seat or response their path points into.
  validation ??= validateBidResponse(response, sent, STRICT_ANSWER);
  const currency = typeof response.cur === "string" ? response.cur : auctionRules.defaultCurrency;
  const rates = env.rates;
  // A bid in a currency the request does not list still competes when the rates convert it (Prebid Server's way).
  const convertible = rates.has(currency, context.currency) && rates.has(currency, auctionRules.reportCurrency);
  let responseProblem: Rejection | undefined;
  // Made only for an answer with problems: most have none.
  let seatProblems: Map<string, Rejection> | undefined;
  let bidProblems: Map<string, Rejection> | undefined;
  for (const error of validation.errors) {
    if (error.rule === "response-cur-allowed" && convertible) continue;
    const detail = `${error.path || "/"}: ${error.message} [${error.rule}]`;
    // The reason the spec gives the rule (auction-rejections rules); a problem inside the markup is a mismatch.
    const inBid = bidPath.exec(error.path);
    const reason: AuctionRejection = inBid?.[3] !== undefined ? "markup-mismatch" : (auctionRejectionOfRule[error.rule] ?? "invalid-response");
    const inSeat = inBid ? undefined : seatPath.exec(error.path);
    if (inBid) {
      const key = `${inBid[1]}/${inBid[2]}`;
      bidProblems ??= new Map();
      if (!bidProblems.has(key)) bidProblems.set(key, { reason, detail });
    } else if (inSeat) {
      seatProblems ??= new Map();
      if (!seatProblems.has(inSeat[1])) seatProblems.set(inSeat[1], { reason: "invalid-response", detail });
    } else if (reason !== "invalid-response") {
      responseProblem ??= { reason, detail };
    } else if (responseProblem?.reason !== "invalid-response") {
      responseProblem = { reason: "invalid-response", detail };
    }
  }

  const responseBidId = typeof response.bidid === "string" ? response.bidid : undefined;
  const seatbids: unknown[] = Array.isArray(response.seatbid) ? response.seatbid : [];
  // The imps this answer has a valid bid for (one demand response each).
  const answeredImps = new Set<string>();
  let bidsSeen = 0;
  for (let s = 0; s < seatbids.length; s++) {
    const seat = seatbids[s];
    if (!isObject(seat) || !Array.isArray(seat.bid)) continue;
    const seatId = typeof seat.seat === "string" ? seat.seat : bidder.config.seat;
    const seatProblem = seatProblems?.get(String(s));
    const bids: unknown[] = seat.bid;
    for (let b = 0; b < bids.length; b++) {
      const bid = bids[b];
      bidsSeen++;
      bidder.counters.bids++;
      let problem = responseProblem ?? seatProblem ?? bidProblems?.get(`${s}/${b}`);
      if (problem === undefined && !isObject(bid)) problem = { reason: "invalid-response", detail: "bid is not an object" };
      const valid = bid as Bid;
      const slot = problem === undefined ? context.slots.get(valid.impid) : undefined;
      if (problem === undefined && slot === undefined) problem = { reason: "unknown-imp", detail: `impid ${JSON.stringify(valid.impid)} names no imp` };
      const bidMicros = problem === undefined ? toMicros(valid.price) : 0;
      // Compared in the auction's currency, capped in the reports' one.
      const priceMicros = rates.convert(bidMicros, currency, context.currency);
      const reportMicros = rates.convert(bidMicros, currency, auctionRules.reportCurrency);
      if (problem === undefined && (priceMicros === undefined || reportMicros === undefined)) {
        problem = { reason: "currency-no-rate", detail: `no rate converts ${currency} to ${context.currency} and ${auctionRules.reportCurrency}` };
      }
      if (problem === undefined && valid.adm === undefined && valid.nurl === undefined) {
        problem = { reason: "markup-mismatch", detail: "bid has neither adm nor nurl: no markup to serve" };
      }
      // Reached with an object adm only in lenient mode (strict mode rejected it: native-markup-object).
      if (problem === undefined && typeof valid.adm === "object") valid.adm = JSON.stringify(valid.adm);
      // Before the markup checks (the costly ones): a bid whose notices the exchange may not call cannot compete.
      problem ??= noticeRefusal(valid, bidder.noticeOrigins);
      const verdict = problem ?? checkBid(valid as TextMarkupBid, { auction: priceMicros!, report: reportMicros! }, bidder.maxPriceMicros, slot!.rules, context.rules);
      if (typeof verdict === "object") {
        rejectBid(env, context, bidder, verdict, isObject(bid) ? bid.id : undefined, isObject(bid) ? bid.impid : undefined);
        continue;
      }
      bidder.counters.validBids++;
      slot!.candidates.push({ bidder, bid: valid as TextMarkupBid, seat: seatId, priceMicros: priceMicros!, currency, kind: verdict, responseBidId, seq: context.seq++ });
      if (!answeredImps.has(valid.impid)) {
        answeredImps.add(valid.impid);
        const demand = slot!.demand.get(id)!;
        context.increments.push({ side: "demand", key: demand.key, id: demand.id, counts: RESPONSE });
      }
    }
  }
  if (bidsSeen === 0) {
    const problem = responseProblem ?? seatProblems?.values().next().value ?? { reason: "invalid-response" as const, detail: "seatbid holds no bid" };
    rejectBid(env, context, bidder, problem, undefined, undefined);
  }
}

/**
 * Counts what lenient mode changed in a bidder's answer, per rule; the bids it dropped count as
 * bids received and as rejections under their rule's reason (auction-rejections rules), as the
 * same bids would in strict mode.
 */
function lenientChanges(env: AuctionEnv, context: AuctionContext, bidder: BidderRuntime, response: Record<string, any>, changes: readonly Normalisation[]): void {
  env.counters.lenientChanges(bidder.counters.lenient, changes);
  for (const change of changes) {
    if (change.action !== "drop") continue;
    const dropped = bidsAt(response, change.path);
    const reason = auctionRejectionOfRule[change.rule] ?? "invalid-response";
    for (const bid of dropped) {
      bidder.counters.bids++;
      rejectBid(env, context, bidder, { reason, detail: `${change.path}: dropped in lenient mode [${change.rule}]` }, bid?.id, bid?.impid);
    }
  }
}

/** The bids of a response inside the part at `path` (a bid or a seatbid). */
function bidsAt(response: Record<string, any>, path: string): any[] {
  const seats: unknown[] = Array.isArray(response.seatbid) ? response.seatbid : [];
  const seatBids = (seat: unknown): unknown[] => (isObject(seat) && Array.isArray(seat.bid) ? seat.bid : []);
  const [, field, s, , b] = path.split("/");
  if (field !== "seatbid" || s === undefined) return [];
  const bids = seatBids(seats[Number(s)]);
  return b === undefined ? bids : bids.slice(Number(b), Number(b) + 1);
}

/** Why a bid's nurl or burl may not be called (notice-origins.ts), as a rejection; undefined when both may. */
function noticeRefusal(bid: Bid, origins: NoticeOrigins): Rejection | undefined {
  const why = (bid.nurl !== undefined ? origins.refusal(bid.nurl) : undefined) ?? (bid.burl !== undefined ? origins.refusal(bid.burl) : undefined);
  return why === undefined ? undefined : { reason: "notice-url-not-allowed", detail: why };
}
