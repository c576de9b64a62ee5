/**
 * The billing call (GET /events/billing?token=…): the exchange's own burl. Its token is opened
 * (billing-token.ts), its impression recorded once and on disk before the 204, the bidder's own
 * burl then called.
 */
import type { OperationInput, OperationOutput } from "@adxkit/bindings/fastify";
import { demandKeyOf, supplyKeyOf } from "@adxkit/bindings/reports";
import { storeRefusal, type FactCounts } from "../events/facts.js";
import { ruleRefusal } from "../rule-refusal.js";
import { isObject, type AuctionEnv } from "./auction-context.js";
import { openBillingToken } from "./billing-token.js";
import type { NoticeSender } from "./notices.js";
import type { NoticeThread } from "./notice-thread.js";

/** Billing calls: the tokens already counted, and how a new one is recorded. */
export class BillingCalls {
  /**
   * Billing token ids this node recorded, with their expiry (epoch ms); swept once a minute. What
   * makes a token count once on DuckDB; on a store shared by nodes that `countsBilledOnce`, only
   * a fast path (a repeat to another node is written again and collapses in the store).
   */
  private readonly seenTokens = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly env: AuctionEnv,
    private readonly noticeQueue: NoticeSender | NoticeThread,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** Token ids known to be counted (after a restart: the store's and the spool's), with their expiry. */
  remember(id: string, expiresAt: number): void {
    this.seenTokens.set(id, expiresAt);
  }

  /** How many counted tokens are remembered. */
  get seen(): number {
    return this.seenTokens.size;
  }

  /** GET /events/billing?token=…: 403 for a forged, malformed or expired token; else 204, counted once. */
  async billing(input: OperationInput<unknown>): Promise<OperationOutput> {
    const { counters, facts, logger } = this.env;
    const token = isObject(input.payload) ? input.payload.token : undefined;
    const verdict = openBillingToken(token, this.env.billingKeys, this.env.clock());
    if (!verdict.ok) {
      counters.billing[verdict.rule === "billing-token-expired" ? "expired" : "invalid"]++;
      return ruleRefusal(verdict.rule, verdict.message, { path: "/token" });
    }
    const { claims: c, key } = verdict;
    if (this.seenTokens.has(c.jti)) {
      counters.billing.duplicate++;
      return { status: 204 };
    }
    // Money counters count nano-dollars: a CPM in micro-units is that per impression.
    const counts: FactCounts = { impression: 1, revenue: c.px };
    const supplyKey = supplyKeyOf(key);
    const demandKey = demandKeyOf(key);
    // A 204 means counted: a fact the store would refuse at the flush is refused here, unacknowledged.
    const refused = storeRefusal("supply", supplyKey, counts) ?? storeRefusal("demand", demandKey, counts);
    if (refused !== undefined) {
      counters.billing.refused++;
      logger.error({ auction: c.aid, imp: c.iid, problem: refused }, "billing call refused: the report store would not keep its impression");
      return ruleRefusal("billing-fact-refused", `the impression cannot be recorded: ${refused}`, { path: "/token" });
    }
    this.seenTokens.set(c.jti, c.exp);
    try {
      // Acknowledged only once on disk: the 204 is the device's proof that the impression counts.
      await facts.record(
        [
          { side: "supply", key: supplyKey, id: facts.supplyId(supplyKey), counts },
          { side: "demand", key: demandKey, id: facts.demandId(demandKey), counts },
        ],
        { billingToken: { id: c.jti, expiresAt: c.exp }, sync: true },
      );
    } catch (error) {
      // Counted in memory (a repeat is a duplicate), but not crash-safe: tell the device to call again.
      counters.spoolFailures++;
      logger.error({ err: error, auction: c.aid, imp: c.iid }, "spool write failed; billing call answered 503");
      return ruleRefusal("billing-not-recorded", "the billing call could not be recorded durably; call again later");
    }
    counters.billing.recorded++;
    if (c.burl !== undefined) this.noticeQueue.send("billing", c.burl, { auction: c.aid, bidder: key.bidder_id, imp: c.iid });
    return { status: 204 };
  }

  /** Stops the sweep. */
  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = this.env.clock();
    for (const [jti, exp] of this.seenTokens) if (exp <= now) this.seenTokens.delete(jti);
  }
}
