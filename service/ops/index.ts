/**
 * Operations endpoints of `adxkit serve`: GET /health (the process answers), GET /ready (the
 * store answers, the spool folder takes a write, the bidders are loaded; 503 naming what
 * failed), GET /metrics (Prometheus text, metrics.ts), and `/` sending a browser to the docs.
 * Documented in docs/operations.md.
 */
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import type { ExchangeHandle } from "../auction/index.js";
import type { ReportStore } from "../store/store.js";
import type { ServerMetrics } from "./metrics.js";

export { ServerMetrics } from "./metrics.js";

export interface OpsOptions {
  store: ReportStore;
  metrics: ServerMetrics;
  /** The exchange, when bidders are configured. */
  exchange?: ExchangeHandle;
  /** How many bidders were loaded from the bidders file (undefined: the server runs without an exchange). */
  bidders?: number;
  /** The exchange's spool folder, when it has one. */
  spoolDir?: string;
  /** How long /ready waits for the store (default 2 s). */
  storeTimeoutMs?: number;
}

/** One check of /ready. */
export interface ReadinessCheck {
  ok: boolean;
  /** Why it failed, or what it found. */
  detail: string;
}

/** The body of /ready: 200 when every check is ok, else 503. */
export interface Readiness {
  ready: boolean;
  checks: { store: ReadinessCheck; spool: ReadinessCheck; bidders: ReadinessCheck };
}

const REPORT_SIDES: Record<string, "demand" | "supply"> = { "/api/report/demand_report_v2": "demand", "/api/report/v1": "supply" };
const AUCTION_PATH = "/openrtb2/auction";

/** Settles with the promise's outcome, or fails after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const failed = (error: unknown): ReadinessCheck => ({ ok: false, detail: (error as Error).message });

/** Runs the readiness checks (all of them, each failure with its reason). */
export async function readiness(options: OpsOptions): Promise<Readiness> {
  const store = within(options.store.ping(), options.storeTimeoutMs ?? 2000, "the report store")
    .then((): ReadinessCheck => ({ ok: true, detail: "answers" }))
    .catch(failed);
  const spool =
    options.spoolDir === undefined
      ? Promise.resolve<ReadinessCheck>({ ok: true, detail: "none (no exchange, --no-spool or an in-memory database)" })
      : (async (): Promise<ReadinessCheck> => {
          // A real write: a full disk or a folder turned read-only fails here, as the spool would.
          const probe = join(options.spoolDir!, ".ready-probe");
          try {
            await writeFile(probe, String(process.pid));
            await rm(probe, { force: true });
            return { ok: true, detail: `${options.spoolDir} is writable` };
          } catch (error) {
            return { ok: false, detail: `${options.spoolDir} is not writable: ${(error as Error).message}` };
          }
        })();
  const bidders: ReadinessCheck =
    options.bidders === undefined
      ? { ok: true, detail: "no exchange (serve without --bidders)" }
      : options.bidders > 0
        ? { ok: true, detail: `${options.bidders} loaded${pausedBidders(options.exchange)}` }
        : { ok: false, detail: "the bidders file lists no bidder" };
  const checks = { store: await store, spool: await spool, bidders };
  return { ready: checks.store.ok && checks.spool.ok && checks.bidders.ok, checks };
}

/** ", paused (circuit open): a, b" for bidders the circuit breaker skips now; they are loaded, so still ready. */
function pausedBidders(exchange: ExchangeHandle | undefined): string {
  if (exchange === undefined) return "";
  const paused = Object.entries(exchange.stats().circuits)
    .filter(([, c]) => c.state === "open")
    .map(([id]) => id);
  return paused.length > 0 ? `; paused (circuit open): ${paused.join(", ")}` : "";
}

/**
 * Logs, at info, once a second in which auctions ran, what they came to: the per-auction lines
 * are at debug (app.ts), far too many at info under load.
 */
function startAuctionSummary(app: FastifyInstance, exchange: ExchangeHandle): void {
  let last = exchange.stats();
  const timer = setInterval(() => {
    const now = exchange.stats();
    if (now.auctions !== last.auctions || now.billing.recorded !== last.billing.recorded) {
      const sum = (s: typeof now, pick: (c: (typeof now.bidders)[string]) => number) => Object.values(s.bidders).reduce((n, c) => n + pick(c), 0);
      const faults = (c: (typeof now.bidders)[string]) => Object.values(c.faults).reduce((n: number, f) => n + (f ?? 0), 0);
      app.log.info(
        {
          auctions: now.auctions - last.auctions,
          won: now.answered - last.answered,
          noBid: now.noBid - last.noBid,
          invalid: now.invalidRequests - last.invalidRequests,
          late: now.late - last.late,
          overloaded: now.overloaded - last.overloaded,
          bids: sum(now, (c) => c.bids) - sum(last, (c) => c.bids),
          bidderFaults: sum(now, faults) - sum(last, faults),
          billed: now.billing.recorded - last.billing.recorded,
        },
        "auctions in the last second",
      );
    }
    last = now;
  }, 1000);
  timer.unref();
  app.addHook("onClose", async () => clearInterval(timer));
}

/** Adds /health, /ready, /metrics and the `/` redirect, the hooks that time auctions and report queries, and the per-second auction summary. */
export function registerOps(app: FastifyInstance, options: OpsOptions): void {
  const { metrics } = options;
  if (options.exchange) {
    metrics.watchExchange(options.exchange.stats);
    startAuctionSummary(app, options.exchange);
  }
  app.addHook("onResponse", async (request, reply) => {
    const path = request.routeOptions.url;
    if (path === AUCTION_PATH) metrics.observeAuction(reply.statusCode, reply.elapsedTime / 1000);
    else if (path !== undefined && REPORT_SIDES[path] !== undefined) metrics.observeReport(REPORT_SIDES[path], reply.elapsedTime / 1000);
  });
  app.get("/", async (_request, reply) => reply.redirect("/docs/", 302));
  app.get("/health", async () => ({ status: "ok" }));
  app.get("/ready", async (_request, reply) => {
    const result = await readiness(options);
    return reply.code(result.ready ? 200 : 503).send(result);
  });
  app.get("/metrics", async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()));
}
