/** `adxkit serve`: one Fastify server for the report APIs A and B, the exchange (with --bidders) and the docs. */
import type { Command } from "commander";
import { auctionRules } from "@adxkit/bindings";
import { isSafeCpm, MAX_SAFE_CPM } from "../../auction/money.js";
import { startServer, type ServerOptions } from "../../server.js";
import { UsageError } from "../errors.js";
import { addStoreOptions, openStoreFrom } from "../store-options.js";

/** --max-cpm: a positive CPM whose micro-units stay a safe integer. */
function maxCpm(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!isSafeCpm(value)) throw new UsageError(`--max-cpm must be a positive number of at most ${MAX_SAFE_CPM} (got "${text}")`);
  return value;
}

export function configure(command: Command): void {
  addStoreOptions(command)
    .option("--db <path>", "DuckDB file of the embedded store (:memory: works)", "./data/adxkit.duckdb")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port to listen on (0 picks one)", "8080")
    .option("--bidders <file>", "JSON array of bidders [{id, endpoint, seat, formats?, timeout_ms?, max_cpm?, notice_origins?, allow_private_addresses?}]; enables the exchange")
    .option("--max-cpm <cpm>", `highest bid price the exchange takes, CPM (a bidder's max_cpm overrides it; default ${auctionRules.maxBidCpm})`)
    .option("--public-url <url>", "base address devices use to reach this server (billing URLs); default http://HOST:PORT")
    .option("--spool <dir>", "write-ahead spool of the exchange: auctions and billing calls survive a crash (default: spool/ beside --db; none for :memory:)")
    .option("--no-spool", "run the exchange without a spool (a crash loses up to a second of counts)")
    .option("--lenient", "accept code-list values newer than the spec (reported as warnings)")
    .option("--log-level <level>", "pino log level: fatal, error, warn, info, debug", "info")
    .addHelpText(
      "after",
      `
Examples:
  $ adxkit serve --db ./data/adxkit.duckdb --port 8080
  $ adxkit serve --db :memory: --bidders bidders.json --lenient
  $ adxkit serve --db ./data/adxkit.duckdb --bidders bidders.json --spool /var/lib/adxkit/spool
  $ curl -s -X POST http://127.0.0.1:8080/api/report/v1 -H 'content-type: application/json' \\
      -H 'x-userid: …' -H 'x-authorization: …' -d '{"start":"2026-10-01T00:00:00","end":"2026-10-31T23:59:59"}'`,
    )
    .action(async (options: { db: string; store?: string; clickhouseUrl?: string; host: string; port: string; bidders?: string; maxCpm?: string; publicUrl?: string; spool: string | boolean; lenient?: boolean; logLevel: string }) => {
      const maxBidCpm = maxCpm(options.maxCpm);
      const serverOptions: ServerOptions = {
        db: options.db,
        store: await openStoreFrom(options),
        host: options.host,
        port: Number(options.port),
        biddersFile: options.bidders,
        maxBidCpm,
        publicUrl: options.publicUrl,
        lenient: options.lenient === true,
        logLevel: options.logLevel,
        // commander: --spool DIR gives the folder, --no-spool false, neither true (the default place).
        spool: typeof options.spool === "string" ? options.spool : options.spool === false ? false : undefined,
      };
      const server = await startServer(serverOptions);
      process.stderr.write(`adxkit: listening on ${server.url} (reports, ${options.bidders ? "exchange, " : ""}docs at ${server.url}/docs/)\n`);
      const stop = async () => {
        await server.close();
        await server.store.close();
        process.exit(0);
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      // A key rotation step (adxkit billing-keys) takes effect without a restart.
      process.on("SIGHUP", () => {
        try {
          server.reload();
        } catch (error) {
          server.app.log.error({ err: error }, "reload failed; the previous configuration stays");
        }
      });
    });
}
