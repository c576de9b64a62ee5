/**
 * `adxkit serve`: one Fastify server for the report APIs A and B, the exchange (with --bidders),
 * the docs and the operations endpoints. Its options are spec/schemas/serve-options.yaml
 * (serve-options.ts): flags, ADXKIT_* variables, defaults, --print-config.
 */
import type { Command } from "commander";
import { assertPortFree, startServer, type ServerOptions } from "../../server.js";
import { addServeOptions, printableConfig, resolveServeOptions } from "../serve-options.js";
import { openStoreFrom, storeIdentity } from "../store-options.js";

export function configure(command: Command): void {
  addServeOptions(command)
    .addHelpText(
      "after",
      `
Examples:
  $ adxkit serve --db ./data/adxkit.duckdb --port 8080
  $ ADXKIT_PORT=9000 ADXKIT_BIDDERS=bidders.json adxkit serve --print-config
  $ adxkit serve --db :memory: --bidders bidders.json --lenient
  $ adxkit serve --db ./data/adxkit.duckdb --bidders bidders.json --spool /var/lib/adxkit/spool
  $ adxkit serve --bidders bidders.json --currency-rates rates.json   # then kill -HUP <pid> after a new rates.json
  $ curl -s -X POST http://127.0.0.1:8080/openrtb2/auction -H 'content-type: application/json' \\
      -H 'authorization: Bearer <auction key from adxkit accounts create --side supply>' -d @request.json
  $ curl -s -X POST http://127.0.0.1:8080/api/report/v1 -H 'content-type: application/json' \\
      -H 'x-userid: …' -H 'x-authorization: …' -d '{"start":"2026-10-01T00:00:00","end":"2026-10-31T23:59:59"}'`,
    )
    .action(async (_flags: unknown, self: Command) => {
      const config = resolveServeOptions(self);
      if (self.opts().printConfig === true) {
        process.stdout.write(`${JSON.stringify(printableConfig(config), null, 2)}\n`);
        return;
      }
      const options = config.values;
      const host = options.host ?? "127.0.0.1";
      const port = options.port ?? 8080;
      // A taken port fails before the store is opened (and migrated, or its spool replayed).
      await assertPortFree(host, port);
      const db = options.db ?? "./data/adxkit.duckdb";
      const store = await openStoreFrom(
        { db, store: options.store, clickhouseUrl: options.clickhouseUrl, clickhousePassword: options.clickhousePassword, duckdbThreads: options.duckdbThreads, duckdbMemoryLimit: options.duckdbMemoryLimit, backgroundNice: options.backgroundNice, backgroundIdle: options.backgroundIdle },
        { create: true, serving: true },
      );
      const serverOptions: ServerOptions = {
        db,
        store,
        host,
        port,
        biddersFile: options.bidders,
        maxBidCpm: options.maxCpm,
        currencyRatesFile: options.currencyRates,
        openAuction: options.openAuction === true,
        publicUrl: options.publicUrl,
        lenient: options.lenient === true,
        warmUpRequests: options.warmUpRequests,
        logLevel: options.logLevel,
        clientLimits: { requestTimeoutMs: options.requestTimeoutMs, headersTimeoutMs: options.headersTimeoutMs, maxConnections: options.maxConnections },
        // --spool DIR gives the folder, --no-spool (or ADXKIT_SPOOL=false) none, neither the default place.
        spool: typeof options.spool === "string" ? options.spool : options.spool === false ? false : undefined,
        database: storeIdentity({ db, store: options.store, clickhouseUrl: options.clickhouseUrl }),
      };
      const server = await startServer(serverOptions).catch(async (error: unknown) => {
        await store.close().catch(() => undefined);
        throw error;
      });
      if (options.bidders && options.openAuction === true) process.stderr.write("adxkit: --open-auction: anyone may run auctions, for any publisher, without an auction key (the demo and tests only)\n");
      process.stderr.write(`adxkit: listening on ${server.url} (reports, ${options.bidders ? "exchange, " : ""}docs at ${server.url}/docs/, ${server.url}/health, /ready, /metrics)\n`);
      const stop = async () => {
        await server.close();
        await server.store.close();
        process.exit(0);
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      // A key rotation step (adxkit billing-keys) takes effect without a restart.
      process.on("SIGHUP", () => {
        server.reload().catch((error: unknown) => server.app.log.error({ err: error }, "reload failed; the previous configuration stays"));
      });
    });
}
