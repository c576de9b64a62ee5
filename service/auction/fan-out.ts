/**
 * The fan-out: the request to every eligible bidder at once, each answer handed on as it
 * arrives, one timer per distinct budget expiring the calls still running.
 */
import { performance } from "node:perf_hooks";
import type { BidRequest } from "@adxkit/bindings";
import { adFormatsOffered } from "../events/dimensions.js";
import { REQUEST, type AuctionContext, type BidderRuntime } from "./auction-context.js";
import { forwardedBody } from "./forward.js";
import type { BidCall, CallOutcome, HttpClient } from "./http-client.js";

/** Told each bidder's outcome: `sent` is the request that bidder received, `budgetMs` the time it had. */
/** `lateMs`: how late the exchange saw the call's deadline when the call timed out at it (0 otherwise). */
export type AnswerHandler = (context: AuctionContext, bidder: BidderRuntime, sent: BidRequest, outcome: CallOutcome, budgetMs: number, lateMs: number) => void;

/** What a fan-out needs of the exchange. */
export interface FanOutDeps {
  bidders: readonly BidderRuntime[];
  http: HttpClient;
  onAnswer: AnswerHandler;
  /** How long a call past its deadline may still answer, keeping its connection (x-adxkit-auction late-answer-grace-ms). */
  lateAnswerGraceMs: number;
  /** Told each call's outcome and its time since the fan-out (ExchangeOptions.onBidderCall). */
  onBidderCall?: (bidderId: string, ms: number, outcome: CallOutcome["kind"]) => void;
}

/**
 * Sends the request to every eligible bidder in parallel, each with at most `budget` ms
 * (`sentAt` is performance.now() at the start); resolves when each has answered or run out of
 * time. Counts a demand request per imp sent to a bidder.
 */
export function fanOut(deps: FanOutDeps, context: AuctionContext, sentAt: number, budget: number): Promise<void> {
  const { request } = context;
  const { http, onAnswer, onBidderCall } = deps;
  // The imps the exchange buys (imps offering only audio are left out).
  const offered = context.slots.size === request.imp.length ? request.imp : [...context.slots.values()].map((slot) => slot.imp);
  const bodies = new Map<string, { sent: BidRequest; body: Buffer }>();
  const calls = new Map<number, { call: BidCall; bidder: BidderRuntime }[]>();
  return new Promise<void>((resolve) => {
    // One count for the loop itself, so that an answer reported synchronously cannot finish early.
    let pending = 1;
    // Set while a deadline's timer expires its calls (they report synchronously): how late it ran.
    let expiryLateMs = 0;
    const timers: NodeJS.Timeout[] = [];
    const settle = () => {
      if (--pending > 0) return;
      for (const timer of timers) clearTimeout(timer);
      resolve();
    };
    for (const bidder of deps.bidders) {
      const imps = bidder.formats ? offered.filter((imp) => adFormatsOffered(imp).some((f) => bidder.formats!.has(f))) : offered;
      if (imps.length === 0) continue;
      // An open circuit skips the bidder (counted in stats().circuits), half-open lets one probe through.
      if (bidder.breaker !== undefined && !bidder.breaker.allow()) continue;
      const ms = bidder.config.timeout_ms !== undefined ? Math.min(budget, bidder.config.timeout_ms) : budget;
      const all = imps.length === request.imp.length;
      // Bidders sent the same imps with the same budget share one body; `sent` is what their
      // answers are checked against (the cross-checks read id, imp and cur, not tmax).
      const bodyKey = `${all ? "*" : imps.map((imp) => imp.id).join("\u0000")}|${ms}`;
      let shared = bodies.get(bodyKey);
      if (shared === undefined) {
        const sent: BidRequest = all ? request : { ...request, imp: imps as BidRequest["imp"] };
        // Encoded once: undici would otherwise encode a string body again for every bidder.
        shared = { sent, body: Buffer.from(forwardedBody(request, all ? undefined : imps, ms)) };
        bodies.set(bodyKey, shared);
      }
      const { sent, body } = shared;
      bidder.counters.requests++;
      for (const imp of imps) {
        const slot = context.slots.get(imp.id)!;
        const demand = bidder.demandFacts.of(context.dateHour, slot.adFormat, context.dims.platform);
        slot.demand.set(bidder.config.id, demand);
        context.increments.push({ side: "demand", key: demand.key, id: demand.id, counts: REQUEST });
      }
      pending++;
      const call = http.postBidRequest(bidder.origin, bidder.path, body, (outcome) => {
        onBidderCall?.(bidder.config.id, performance.now() - sentAt, outcome.kind);
        onAnswer(context, bidder, sent, outcome, ms, expiryLateMs);
        settle();
      });
      let group = calls.get(ms);
      if (group === undefined) calls.set(ms, (group = []));
      group.push({ call, bidder });
    }
    for (const [ms, group] of calls) {
      const due = performance.now() + ms;
      timers.push(
        setTimeout(() => {
          expiryLateMs = Math.max(0, performance.now() - due);
          expireCalls(group, `no complete answer within ${ms} ms`, deps.lateAnswerGraceMs);
          expiryLateMs = 0;
        }, ms),
      );
    }
    settle();
  });
}

/**
 * The deadline of `group` passed: each call still running counts as a timeout now, and may
 * still answer within `graceMs` (read and thrown away, its keep-alive connection kept: in the
 * loopback bench each timeout cost a reconnect, ~1.5 % of the calls on a quiet machine and 5 %
 * on a busy one); after that it is aborted, its connection closed.
 */
function expireCalls(group: readonly { call: BidCall; bidder: BidderRuntime }[], detail: string, graceMs: number): void {
  let running: BidCall[] | undefined;
  for (const { call, bidder } of group) {
    if (call.expire(detail, () => bidder.counters.lateAnswers++)) (running ??= []).push(call);
  }
  if (running === undefined) return;
  const late = `${detail}, nor within ${graceMs} ms after it`;
  // Unref'd: a call left running never keeps the process alive (the pools' close ends it too).
  setTimeout(() => {
    for (const call of running) call.abort(late);
  }, graceMs).unref();
}
