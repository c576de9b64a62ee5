/**
 * Starts the adxkit server: opens the store, builds the app (reports, exchange when bidders
 * are configured, docs), listens. Used by `adxkit serve`, `adxkit demo` and the tests.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { buildApp } from "./app.js";
import { loadBidders, registerExchange } from "./auction/index.js";
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
  close(): Promise<void>;
}

/**
 * The key that signs billing tokens must outlive a restart (a token issued before a restart
 * must still count): ADXKIT_BILLING_SECRET, else a random key kept beside the database file.
 */
export function billingSecret(db: string): Buffer {
  if (process.env.ADXKIT_BILLING_SECRET) return Buffer.from(process.env.ADXKIT_BILLING_SECRET, "utf8");
  if (db === ":memory:") return randomBytes(32);
  const file = resolve(dirname(db), "billing-secret");
  if (existsSync(file)) return Buffer.from(readFileSync(file, "utf8").trim(), "base64url");
  mkdirSync(dirname(file), { recursive: true });
  const secret = randomBytes(32);
  writeFileSync(file, secret.toString("base64url"), { mode: 0o600 });
  return secret;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const store = options.store ?? (await openStore({ db: options.db }));
  const host = options.host ?? "127.0.0.1";
  let exchange: { close(): Promise<void> } | undefined;
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
        exchange = registerExchange(instance, { bidders, sink: store, lenient: options.lenient, billingSecret: billingSecret(options.db), publicUrl, maxBidCpm: options.maxBidCpm, circuitBreaker: {}, noticeThread: true, spoolDir });
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
    async close() {
      await app.close();
      await exchange?.close();
      if (!options.store) await store.close();
    },
  };
}
