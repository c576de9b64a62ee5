/**
 * `adxkit demo` (what `npm start` runs): the server on the embedded store with a month of demo
 * traffic, three reference bidders, and a small traffic generator so auctions happen and the
 * reports fill up. Prints demo credentials and curl commands.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { request } from "undici";
import { packageRoot } from "../../package.js";
import { startBidder, type RunningBidder } from "../../bidder/index.js";
import { startServer } from "../../server.js";
import { generateSeedFacts, openStore } from "../../store/index.js";
import type { ReportStore } from "../../store/store.js";

interface DemoCredentials {
  demand: { userid: string; authorization: string; bidder_id: string };
  supply: { userid: string; authorization: string; publisher_ids: string[] };
}

/** Demo accounts are created once per database and their tokens kept beside it (demo data only). */
async function demoCredentials(store: ReportStore, file: string, rows: number): Promise<DemoCredentials> {
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, "utf8")) as DemoCredentials;
    if (await store.verifyCredentials(saved.demand.userid, saved.demand.authorization)) return saved;
  }
  process.stderr.write(`adxkit demo: seeding ${rows.toLocaleString()} facts of October 2026…\n`);
  await store.ingest(generateSeedFacts({ days: 31, rows, seed: 42 }));
  const publishers = ["pub-1", "pub-2", "pub-3"];
  const demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
  const supply = await store.createAccount({ side: "supply", publisher_ids: publishers, placement_dimensions: true });
  const credentials = { demand: { ...demand, bidder_id: "dsp-1" }, supply: { ...supply, publisher_ids: publishers } };
  writeFileSync(file, JSON.stringify(credentials, null, 2), { mode: 0o600 });
  return credentials;
}

/** The spec's example bid requests (spec/examples/bid-request/), the demo's traffic. */
function examplePayloads(): Record<string, any>[] {
  const folder = join(packageRoot(), "spec", "examples", "bid-request");
  return readdirSync(folder)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(folder, name), "utf8")));
}

/**
 * Sends one auction every `intervalMs` and calls the billing URL of each winning bid. The
 * example requests take turns, each sold as one of the demo publishers so its supply report fills.
 */
function startTraffic(baseUrl: string, intervalMs: number, publishers: readonly string[]): () => void {
  const payloads = examplePayloads();
  let n = 0;
  const timer = setInterval(async () => {
    const example = payloads[n % payloads.length];
    const publisher = publishers[n % publishers.length];
    const body = { ...example, id: `demo-${Date.now()}-${n++}`, app: { ...example.app, publisher: { ...example.app?.publisher, id: publisher } } };
    try {
      const response = await request(`${baseUrl}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const text = await response.body.text();
      if (response.statusCode !== 200) return;
      for (const seat of JSON.parse(text).seatbid ?? []) {
        for (const bid of seat.bid ?? []) if (bid.burl) await (await request(bid.burl)).body.dump();
      }
    } catch {
      // The demo traffic is best effort: the server may be shutting down.
    }
  }, intervalMs);
  return () => clearInterval(timer);
}

export function configure(command: Command): void {
  command
    .option("--db <path>", "DuckDB file", "./data/adxkit.duckdb")
    .option("--port <port>", "port of the server", "8080")
    .option("--rows <n>", "supply facts seeded on first start", "200000")
    .option("--rate <n>", "auctions per second of the traffic generator (0: none)", "5")
    .addHelpText("after", "\nExamples:\n  $ npm start\n  $ adxkit demo --db :memory: --port 0 --rate 20")
    .action(async (options: { db: string; port: string; rows: string; rate: string }) => {
      const db = options.db === ":memory:" ? options.db : resolve(options.db);
      if (db !== ":memory:") mkdirSync(dirname(db), { recursive: true });
      const store = await openStore({ db });
      // An in-memory demo keeps its side files in a temporary folder, never in the package.
      const sideFolder = db === ":memory:" ? mkdtempSync(join(tmpdir(), "adxkit-demo-")) : dirname(db);
      const credentials = await demoCredentials(store, join(sideFolder, "demo-credentials.json"), Number(options.rows));
      const bidders: RunningBidder[] = [];
      for (const [i, price] of [[0.5, 3], [1, 4], [0.8, 2.5]].entries()) {
        bidders.push(await startBidder({ id: `dsp-${i + 1}`, seat: `seat-${i + 1}`, price: price as [number, number], fill: 0.8, latency: [2, 15], seed: i + 1 }));
      }
      const biddersFile = join(sideFolder, "demo-bidders.json");
      // The reference bidders listen on 127.0.0.1: their win and billing notices need allow_private_addresses.
      writeFileSync(biddersFile, JSON.stringify(bidders.map((b, i) => ({ id: `dsp-${i + 1}`, endpoint: b.endpoint, seat: `seat-${i + 1}`, allow_private_addresses: true })), null, 2));
      const server = await startServer({ db, store, port: Number(options.port), biddersFile, logLevel: "warn" });
      const rate = Number(options.rate);
      const stopTraffic = rate > 0 ? startTraffic(server.url, Math.max(1, Math.round(1000 / rate)), credentials.supply.publisher_ids) : () => {};
      const { demand, supply } = credentials;
      process.stdout.write(`
adxkit is running at ${server.url}
  docs:      ${server.url}/docs/
  exchange:  POST ${server.url}/openrtb2/auction  (3 reference bidders, ${rate} demo auctions/s)

Demo credentials (demo data only):
  demand (A), bidder dsp-1:        x-userid ${demand.userid}  x-authorization ${demand.authorization}
  supply (B), pub-1, pub-2, pub-3: x-userid ${supply.userid}  x-authorization ${supply.authorization}

Try:
  curl -s '${server.url}/api/report/demand_report_v2?x-userid=${demand.userid}&x-authorization=${demand.authorization}&start=2026-10-01T00:00:00&end=2026-10-31T23:59:59&dimensions[]=date&metrics[]=revenue&metrics[]=ecpm'
  curl -s -X POST ${server.url}/api/report/v1 -H 'content-type: application/json' -H 'x-userid: ${supply.userid}' -H 'x-authorization: ${supply.authorization}' \\
       -d '{"start":"2026-10-01T00:00:00","end":"2026-10-31T23:59:59","dimensions":["country"],"metrics":["revenue","impression","fill_rate"],"limit":5}'
  curl -s -X POST ${server.url}/openrtb2/auction -H 'content-type: application/json' -d @spec/examples/bid-request/banner-full.json
Today's auctions show up in the reports for today's date (start/end around ${new Date().toISOString().slice(0, 10)}).
Stop with Ctrl-C.
`);
      const stop = async () => {
        stopTraffic();
        await server.close();
        for (const b of bidders) await b.close();
        await store.close();
        process.exit(0);
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
