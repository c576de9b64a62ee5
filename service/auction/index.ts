/**
 * The exchange (interface C): `registerExchange` mounts `POST /openrtb2/auction` and
 * `GET /events/billing` (the generated exchangePlugin) on a Fastify app and returns a handle to
 * close it and read its counters. `adxkit serve --bidders FILE` wires it with `loadBidders`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { exchangePlugin } from "@adxkit/bindings/fastify";
import type { AuctionAccount } from "../accounts/auction-keys.js";
import type { Admission } from "./auction-auth.js";
import { earlyAdmission, shedBeforeFastify } from "./early-shed.js";
import { Exchange, SHED_HEADERS, type ExchangeOptions } from "./exchange.js";
import { parseBidRequestBody } from "./forward.js";
import type { SealKeyRing } from "./token-seal.js";
import type { CurrencyConverter } from "./currency.js";

export { loadBidders, parseBidders, BidderConfigError, type BidderConfig } from "./bidders.js";
export { CurrencyConverter, CurrencyRatesError, loadCurrencyRates, type CurrencyRates } from "./currency.js";
export { Exchange, type ExchangeOptions } from "./exchange.js";
export type { AuctionKeySource } from "../accounts/auction-keys.js";
export type { FactSink } from "../events/facts.js";
export { loadBillingKeys, rotateBillingKeys } from "./billing-keys.js";
export { SealKeyRing, sealKey } from "./token-seal.js";

/** What registerExchange returns. */
export interface ExchangeHandle {
  /** Waits for notices in flight (bounded), flushes pending facts, closes the bidder pools. Idempotent. */
  close(): Promise<void>;
  /** Counters: auctions, per-bidder requests, bids, wins, faults and rejections by reason, billing, notices, facts. */
  stats(): ReturnType<Exchange["stats"]>;
  /** Writes the pending facts now instead of at the next flush. */
  flushFacts(): Promise<number>;
  /** Swaps the billing key ring (a rotation step, reloaded without a restart). */
  useBillingKeys(ring: SealKeyRing): void;
  /** Swaps the currency rates (a new rates file, reloaded without a restart). */
  useCurrencyRates(rates: CurrencyConverter): void;
  /** Re-reads the auction keys now (the admin API, after a revocation or a new key). */
  reloadAuctionKeys(): Promise<void>;
}

/**
 * What the exchange's hook learns of a request before its handler runs, as fields of the
 * request (decorateRequest: every request of the exchange's context has them from its start).
 * WeakMaps keyed by the request cost ~10× more per request and grew the old generation (their
 * entries' keys outlive the young generation): 2 sets and 2 gets 3.0 µs against 0.3 µs, and
 * mark-compacts every 0.5 s, in one process (load 3.6).
 */
interface ExchangeRequest extends FastifyRequest {
  /** performance.now() when it arrived, less the loop's lag with load shedding (Exchange.arrivedAt). */
  adxkitStartedAt: number;
  /** The supply account an admitted auction request runs for (auction-auth.ts). */
  adxkitAccount: AuctionAccount | null;
}

/**
 * Registers the exchange's routes on `app` (in their own encapsulated context: the stub's JSON
 * parser does not leak to other routes). With a spool, what a crash left in it is replayed
 * before the routes exist (the app is not ready until then). The handle also closes with the app.
 */
export function registerExchange(app: FastifyInstance, options: ExchangeOptions): ExchangeHandle {
  const exchange = new Exchange({ ...options, logger: options.logger ?? app.log });
  let auctionPath: string | undefined;
  // With load shedding, an auction it has no room for is answered before Fastify sees it (early-shed.ts).
  if (options.loadShedding) shedBeforeFastify(app.server, exchange, SHED_HEADERS, () => auctionPath);
  app.register(async (scope) => {
    await exchange.recover();
    await exchange.loadAuctionKeys();
    scope.decorateRequest("adxkitStartedAt", 0);
    scope.decorateRequest("adxkitAccount", null);
    /**
     * After the key check (`admission` undefined for an open auction): the refusal, or a shed, is
     * answered here and the request ends; else the request goes on (`done`) with its account.
     */
    const admitted = (request: ExchangeRequest, reply: FastifyReply, admission: Admission | undefined, done: HookHandlerDoneFunction): void => {
      if (admission !== undefined && "refusal" in admission) {
        const { status, headers, body } = admission.refusal;
        reply.code(status).headers(headers ?? {}).type("application/json; charset=utf-8").send(JSON.stringify(body));
        return;
      }
      const load = exchange.admitLoad();
      if (load === true) {
        // 'close' comes once for every response: answered, failed or its connection gone.
        reply.raw.once("close", () => exchange.admissionDone());
      } else if (load !== undefined) {
        reply.code(load.status).headers(load.headers ?? {}).send();
        return;
      }
      if (admission !== undefined) request.adxkitAccount = admission.account;
      done();
    };
    // The auction's clock starts when the request arrives, before its body is read; so do
    // the check of its key (an unauthenticated caller costs no body read and no JSON parse) and
    // load shedding (an auction over the admission rate costs little more than its answer).
    // A callback hook, not an async one: an open auction (no key to look up) goes on in the same
    // tick, without a promise and a microtask per request.
    scope.addHook("onRequest", (fastifyRequest, reply, done) => {
      const request = fastifyRequest as ExchangeRequest;
      const early = earlyAdmission(request.raw);
      if (early !== undefined) {
        // Admitted in front of Fastify (early-shed.ts): its key was checked and its place taken there.
        request.adxkitStartedAt = early.startedAt;
        request.adxkitAccount = early.account;
        return done();
      }
      request.adxkitStartedAt = exchange.arrivedAt();
      if ((request.routeOptions.config as { operationId?: string }).operationId !== "auction") return done();
      const admitting = exchange.admit(request.headers.authorization, request.ip);
      if (admitting === undefined) return admitted(request, reply, undefined, done);
      admitting.then((admission) => admitted(request, reply, admission, done), done);
    });
    // The auction route's path as registered (a prefix included), for the shedding in front of Fastify.
    scope.addHook("onRoute", (route) => {
      if ((route.config as { operationId?: string } | undefined)?.operationId === "auction") auctionPath = route.url;
    });
    await scope.register(exchangePlugin, {
      lenient: options.lenient === true,
      // Most real requests lack some recommended field: those warnings would cost every auction.
      recommended: false,
      parseJson: parseBidRequestBody, // bidders get the caller's own text, tmax rewritten (forward.ts)
      handlers: {
        auction: (input) => {
          const request = input.request as ExchangeRequest;
          return exchange.auction(input, request.adxkitStartedAt, request.adxkitAccount ?? undefined);
        },
        billingEvent: (input) => exchange.billing(input),
      },
    });
  });
  app.addHook("onClose", async () => {
    await exchange.close();
  });
  return { close: () => exchange.close(), stats: () => exchange.stats(), flushFacts: () => exchange.flushFacts(), useBillingKeys: (ring) => exchange.useBillingKeys(ring),
    useCurrencyRates: (rates) => exchange.useCurrencyRates(rates),
    reloadAuctionKeys: () => exchange.loadAuctionKeys(),
  };
}
