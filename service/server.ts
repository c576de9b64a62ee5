/**
 * Starts the adxkit server: opens the store, builds the app (reports, exchange when bidders
 * are configured, docs), listens. Used by `adxkit serve`, `adxkit demo` and the tests.
 */
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { watchAccountChanges } from "./accounts/account-changes.js";
import { createAuthThrottle } from "./accounts/throttle.js";
import { loadAdminKey, publishAdminAddress } from "./admin/access.js";
import { registerAdmin } from "./admin/api.js";
import { buildApp, type ClientLimits } from "./app.js";
import { loadBidders, loadBillingKeys, loadCurrencyRates, registerExchange, type ExchangeHandle } from "./auction/index.js";
import { registerDocs } from "./docs/index.js";
import { registerOps, ServerMetrics } from "./ops/index.js";
import { startSettling } from "./ops/settling.js";
import { serveBackground, serveThreads } from "./store/duckdb/connection.js";
import { openStore } from "./store/index.js";
import type { ReportStore } from "./store/store.js";

export interface ServerOptions {
  db: string;
  host?: string;
  port?: number;
  biddersFile?: string;
  /** Highest bid price the exchange takes, CPM (default: the spec's max-bid-cpm). */
  maxBidCpm?: number;
  /** A currency rates file (Prebid Server's shape), re-read by reload(); USD only without one. */
  currencyRatesFile?: string;
  publicUrl?: string;
  lenient?: boolean;
  logLevel?: string;
  /** Time and connection limits of clients (serve options requestTimeoutMs, headersTimeoutMs, maxConnections). */
  clientLimits?: Partial<ClientLimits>;
  /** Report requests sent through `inject` before listening (serve's warmUpRequests; default 0: none). */
  warmUpRequests?: number;
  /** An already open store (tests, demo); `db` is ignored then. */
  store?: ReportStore;
  /**
   * Anyone may run auctions, for any publisher (adxkit serve --open-auction; tests). Otherwise
   * every auction carries a supply account's auction key, checked against the store.
   */
  openAuction?: boolean;
  /**
   * The exchange's write-ahead spool (crash safety of auction counts and billing calls):
   * a folder, or false for none. Default: `spool/` beside a database file; none for `:memory:`.
   */
  spool?: string | false;
  /**
   * The database the spool records as its own (a spool folder of another database is refused):
   * default, the absolute path of `db` (none for `:memory:`). `adxkit serve --store clickhouse`
   * gives the ClickHouse address without its credentials.
   */
  database?: string;
}

/** Where the exchange's spool goes by default: beside the database file (nothing for an in-memory one). */
export function defaultSpoolDir(db: string): string | undefined {
  return db === ":memory:" ? undefined : resolve(dirname(db), "spool");
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  store: ReportStore;
  /** The exchange, when bidders are configured. */
  exchange?: ExchangeHandle;
  /** Re-reads what may change while serving (the billing key ring, the currency rates); `adxkit serve` calls it on SIGHUP. */
  reload(): Promise<void>;
  /**
   * Polls the store's account changes now, as the timer does every accounts-poll-ms on a shared
   * store (ClickHouse; nothing to poll on DuckDB): resolves once a change seen is in effect.
   */
  pollAccountChanges(): Promise<void>;
  /** Runs a settling of billed impressions now, as the timer does every settle-every-ms, or joins the one running (ClickHouse; nothing on DuckDB). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** The port asked for is taken (or may not be used): one line says which and what to do. */
export class PortUnavailableError extends Error {
  override readonly name = "PortUnavailableError";
  readonly code = "ADX_ERR_PORT_UNAVAILABLE";
}

/** The listen error as a PortUnavailableError when it is about the port, else as it is. */
function portError(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: string }).code;
  if (code === "EADDRINUSE") return new PortUnavailableError(`port ${port} on ${host} is in use by another process: choose another with --port (or PORT / ADXKIT_PORT), or 0 for any free port`);
  if (code === "EACCES") return new PortUnavailableError(`port ${port} on ${host} needs privileges this process lacks: choose one above 1023 with --port (or PORT / ADXKIT_PORT)`);
  if (code === "EADDRNOTAVAIL") return new PortUnavailableError(`${host} is not an address of this machine: choose another with --host (or ADXKIT_HOST)`);
  return error;
}

/**
 * The port to listen on: `port` itself when it can be listened on now, a free one for 0; fails
 * with a PortUnavailableError otherwise, before anything slow starts (the demo checks it before
 * seeding its database). Port 0 becomes a real number here because the exchange writes its own
 * address into every billing URL it hands out.
 */
export async function assertPortFree(host: string, port: number): Promise<number> {
  return new Promise<number>((done, fail) => {
    const probe = createServer();
    probe.once("error", (error) => fail(portError(error, host, port)));
    probe.listen({ host, port, exclusive: true }, () => {
      const chosen = (probe.address() as { port: number }).port;
      probe.close(() => done(chosen));
    });
  });
}

/**
 * Opens the store (unless given), builds the app with the docs, the exchange (with a bidders
 * file) and the operations endpoints (/health, /ready, /metrics), and listens. What it opened is
 * closed again when it fails; a taken port is a PortUnavailableError.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  // Before anything slow or stateful starts: a taken port fails in a moment, with nothing to undo.
  const port = await assertPortFree(host, options.port ?? 8080);
  const adminKey = loadAdminKey(options.db);
  const store = options.store ?? (await openStore({ db: options.db, duckdbThreads: serveThreads(), background: serveBackground() }));
  let exchange: ExchangeHandle | undefined;
  let built: FastifyInstance | undefined;
  const metrics = new ServerMetrics();
  try {
    // One throttle for every credential check: report credentials and auction keys.
    const authThrottle = createAuthThrottle();
    built = await buildApp({
      store,
      authThrottle,
      clientLimits: options.clientLimits,
      lenient: options.lenient,
      warmUpRequests: options.warmUpRequests,
      // Secret query parameters (spec x-adxkit-secret) are redacted from logged URLs by buildApp (service/log.ts).
      logger: { level: options.logLevel ?? "info" },
      extend: async (instance) => {
        await registerDocs(instance, {});
        let bidders: number | undefined;
        let spoolDir: string | undefined;
        if (options.biddersFile) {
          const configs = await loadBidders(options.biddersFile);
          const currencyRates = options.currencyRatesFile !== undefined ? await loadCurrencyRates(options.currencyRatesFile) : undefined;
          bidders = configs.length;
          const publicUrl = options.publicUrl ?? `http://${host}:${port}`;
          spoolDir = options.spool === false ? undefined : (options.spool ?? defaultSpoolDir(options.db));
          exchange = registerExchange(instance, {
            bidders: configs,
            sink: store,
            lenient: options.lenient,
            billingKeys: loadBillingKeys(options.db),
            publicUrl,
            maxBidCpm: options.maxBidCpm,
            currencyRates,
            circuitBreaker: {},
            noticeThread: true,
            loadShedding: true,
            spoolDir,
            spoolDatabase: options.database ?? (options.db === ":memory:" ? undefined : resolve(options.db)),
            onBidderCall: (bidder, ms, outcome) => metrics.observeBidderCall(bidder, ms, outcome),
            ...(options.openAuction === true ? { openAuction: true } : { auctionKeys: store, authThrottle }),
          });
          if (options.openAuction === true) instance.log.warn("--open-auction: POST /openrtb2/auction accepts any caller, for any publisher (the demo and tests only)");
        }
        registerOps(instance, { store, metrics, exchange, bidders, spoolDir });
        // The admin API: `adxkit accounts` while this process holds the database (none for an in-memory one without ADXKIT_ADMIN_KEY).
        if (adminKey) registerAdmin(instance, { store, key: adminKey.key, throttle: authThrottle, auctionKeysChanged: () => exchange?.reloadAuctionKeys() ?? Promise.resolve() });
      },
    });
    await built.listen({ host, port }).catch((error: unknown) => {
      throw portError(error, host, port);
    });
  } catch (error) {
    await built?.close().catch(() => undefined);
    await exchange?.close().catch(() => undefined);
    if (!options.store) await store.close().catch(() => undefined);
    throw error;
  }
  const app = built;
  const address = app.server.address();
  const url = typeof address === "object" && address ? `http://${host}:${address.port}` : `http://${host}:${port}`;
  // Where `adxkit accounts` finds this server (a wildcard host is reached on loopback).
  if (adminKey) publishAdminAddress(options.db, host === "0.0.0.0" || host === "::" ? `http://127.0.0.1:${port}` : url, adminKey);
  const settling = startSettling(store, { log: app.log, metrics });
  // A revocation through another node reaches this one within accounts-poll-ms (ClickHouse).
  const accountChanges = watchAccountChanges(store, { log: app.log, onChange: () => exchange?.reloadAuctionKeys() ?? Promise.resolve() });
  return {
    url,
    app,
    store,
    exchange,
    async reload() {
      if (exchange === undefined) return;
      // Each part is read whole before it is used: a bad file leaves the previous one in use.
      const ring = loadBillingKeys(options.db);
      const rates = options.currencyRatesFile !== undefined ? await loadCurrencyRates(options.currencyRatesFile) : undefined;
      exchange.useBillingKeys(ring);
      if (rates !== undefined) exchange.useCurrencyRates(rates);
      app.log.info({ billingKeys: ring.keys.map((k) => k.id), currencies: rates && [...rates.currencies].sort(), ratesAsOf: rates?.dataAsOf }, "billing keys and currency rates reloaded");
    },
    pollAccountChanges: () => accountChanges?.run() ?? Promise.resolve(),
    settle: () => settling?.run() ?? Promise.resolve(),
    async close() {
      await accountChanges?.stop();
      await settling?.stop();
      await app.close();
      await exchange?.close();
      if (!options.store) await store.close();
    },
  };
}
