/**
 * Starts the adxkit server: opens the store, builds the app (reports, exchange when bidders
 * are configured, docs), listens. Used by `adxkit serve`, `adxkit demo` and the tests.
 */
import { dirname, resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.js";
import { loadBidders, loadBillingKeys, registerExchange, type ExchangeHandle } from "./auction/index.js";
import { registerDocs } from "./docs/index.js";
import { openStore } from "./store/index.js";
import type { ReportStore } from "./store/store.js";

export interface ServerOptions {
  db: string;
  host?: string;
  port?: number;
  biddersFile?: string;
  /** Highest bid price the exchange takes, CPM (default: the spec's max-bid-cpm). */
  maxBidCpm?: number;
  publicUrl?: string;
  lenient?: boolean;
  logLevel?: string;
  /** An already open store (tests, demo); `db` is ignored then. */
  store?: ReportStore;
  /**
   * The exchange's write-ahead spool (crash safety of auction counts and billing calls):
   * a folder, or false for none. Default: `spool/` beside a database file; none for `:memory:`.
   */
  spool?: string | false;
}

/** Where the exchange's spool goes by default: beside the database file (nothing for an in-memory one). */
export function defaultSpoolDir(db: string): string | undefined {
  return db === ":memory:" ? undefined : resolve(dirname(db), "spool");
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  store: ReportStore;
  /** Re-reads what may change while serving (the billing key ring); `adxkit serve` calls it on SIGHUP. */
  reload(): void;
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const store = options.store ?? (await openStore({ db: options.db }));
  const host = options.host ?? "127.0.0.1";
  let exchange: ExchangeHandle | undefined;
  const app = await buildApp({
    store,
    lenient: options.lenient,
    // Secret query parameters (spec x-adxkit-secret) are redacted from logged URLs by buildApp (service/log.ts).
    logger: { level: options.logLevel ?? "info" },
    extend: async (instance) => {
      await registerDocs(instance, {});
      if (options.biddersFile) {
        const bidders = await loadBidders(options.biddersFile);
        const publicUrl = options.publicUrl ?? `http://${host}:${options.port ?? 8080}`;
        const spoolDir = options.spool === false ? undefined : (options.spool ?? defaultSpoolDir(options.db));
        exchange = registerExchange(instance, { bidders, sink: store, lenient: options.lenient, billingKeys: loadBillingKeys(options.db), publicUrl, maxBidCpm: options.maxBidCpm, circuitBreaker: {}, noticeThread: true, spoolDir });
      }
    },
  });
  await app.listen({ host, port: options.port ?? 8080 });
  const address = app.server.address();
  const url = typeof address === "object" && address ? `http://${host}:${address.port}` : `http://${host}:${options.port}`;
  return {
    url,
    app,
    store,
    reload() {
      if (exchange === undefined) return;
      const ring = loadBillingKeys(options.db);
      exchange.useBillingKeys(ring);
      app.log.info({ billingKeys: ring.keys.map((k) => k.id) }, "billing keys reloaded");
    },
    async close() {
      await app.close();
      await exchange?.close();
      if (!options.store) await store.close();
    },
  };
}
