/**
 * `adxkit demo` (what `npm start` runs): the server on the embedded store with a month of demo
 * traffic, three reference bidders, and a small traffic generator so auctions happen and the
 * reports fill up. Prints demo credentials and curl commands.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { InvalidArgumentError, Option, type Command } from "commander";
import { Agent, request } from "undici";
import { packageRoot } from "../../package.js";
import { startBidder, type RunningBidder } from "../../bidder/index.js";
import { assertPortFree, startServer, type RunningServer } from "../../server.js";
import { serveBackground, serveThreads } from "../../store/duckdb/connection.js";
import { openStore } from "../../store/index.js";
import { PRIVATE_FILE } from "../../private-files.js";
import { UsageError } from "../errors.js";
import type { ReportStore } from "../../store/store.js";

interface DemoCredentials {
  demand: { userid: string; authorization: string; bidder_id: string };
  supply: { userid: string; authorization: string; publisher_ids: string[]; auction_key: string };
}

/**
 * Demo accounts are created once per database and their tokens kept beside it (demo data only).
 * The supply account's auction key runs the demo traffic (a database of an earlier version gets
 * one on its next start).
 */
async function demoCredentials(store: ReportStore, file: string, rows: number): Promise<DemoCredentials> {
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, "utf8")) as DemoCredentials;
    if (await store.verifyCredentials(saved.demand.userid, saved.demand.authorization)) {
      if (typeof saved.supply.auction_key !== "string") {
        saved.supply.auction_key = (await store.issueAuctionKey(saved.supply.userid))!;
        writeFileSync(file, JSON.stringify(saved, null, 2), { mode: PRIVATE_FILE });
      }
      return saved;
    }
  }
  process.stderr.write(`adxkit demo: seeding ${rows.toLocaleString()} facts of October 2026…\n`);
  await store.ingest({ seed: { days: 31, rows, seed: 42 } });
  const publishers = ["pub-1", "pub-2", "pub-3"];
  const demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
  const supply = await store.createAccount({ side: "supply", publisher_ids: publishers, placement_dimensions: true });
  const credentials = { demand: { ...demand, bidder_id: "dsp-1" }, supply: { ...supply, publisher_ids: publishers, auction_key: (await store.issueAuctionKey(supply.userid))! } };
  writeFileSync(file, JSON.stringify(credentials, null, 2), { mode: PRIVATE_FILE });
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
 * The price ranges of the demo's three bidders. Each one's top is above the highest floor of the
 * example requests (the rewarded video's is 4.0), so every ad format the demo offers fills.
 */
function demoPrices(payloads: readonly Record<string, any>[]): [number, number][] {
  const floors = payloads.flatMap((p) => (p.imp ?? []).map((imp: { bidfloor?: number }) => imp.bidfloor ?? 0));
  const top = Math.max(3, ...floors);
  return [
    [0.5, top * 1.5],
    [1, top * 1.75],
    [0.8, top * 1.25],
  ];
}

/**
 * Sends one auction every `intervalMs` and calls the billing URL of each winning bid. The
 * example requests take turns, each sold as one of the demo publishers so its supply report fills.
 */
function startTraffic(baseUrl: string, intervalMs: number, publishers: readonly string[], payloads: readonly Record<string, any>[], auctionKey: string): () => Promise<void> {
  // Its own connections, destroyed when it stops: a keep-alive connection left open would hold
  // the server's close for its keep-alive timeout (65 s).
  const dispatcher = new Agent({ connections: 8 });
  let n = 0;
  const timer = setInterval(async () => {
    const example = payloads[n % payloads.length];
    const publisher = publishers[n % publishers.length];
    const body = { ...example, id: `demo-${Date.now()}-${n++}`, app: { ...example.app, publisher: { ...example.app?.publisher, id: publisher } } };
    try {
      const headers = { "content-type": "application/json", authorization: `Bearer ${auctionKey}` };
      const response = await request(`${baseUrl}/openrtb2/auction`, { method: "POST", headers, body: JSON.stringify(body), dispatcher });
      const text = await response.body.text();
      if (response.statusCode !== 200) return;
      for (const seat of JSON.parse(text).seatbid ?? []) {
        for (const bid of seat.bid ?? []) if (bid.burl) await (await request(bid.burl, { dispatcher })).body.dump();
      }
    } catch {
      // The demo traffic is best effort: the server may be shutting down.
    }
  }, intervalMs);
  return async () => {
    clearInterval(timer);
    await dispatcher.destroy();
  };
}

/** A whole number from 0 to `max`, or commander's "argument is invalid" naming the flag and what it takes. */
function wholeNumber(max: number) {
  return (text: string): number => {
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value > max) throw new InvalidArgumentError(`It takes a whole number from 0 to ${max}.`);
    return value;
  };
}

/** The port when neither --port nor ADXKIT_PORT gives one: PORT (as hosting platforms set it), else 8080. */
function defaultPort(): number {
  if (process.env.PORT === undefined) return 8080;
  try {
    return wholeNumber(65_535)(process.env.PORT);
  } catch (error) {
    throw new UsageError(`PORT: ${(error as Error).message} (got ${JSON.stringify(process.env.PORT)})`);
  }
}

export function configure(command: Command): void {
  command
    .addOption(new Option("--db <path>", "DuckDB file (:memory: works)").env("ADXKIT_DB").default("./data/adxkit.duckdb"))
    .addOption(new Option("--port <port>", "port of the server (0 picks one); else PORT").env("ADXKIT_PORT").argParser(wholeNumber(65_535)).default(defaultPort()))
    .addOption(new Option("--rows <n>", "supply facts seeded on first start").argParser(wholeNumber(100_000_000)).default(200_000))
    .addOption(new Option("--rate <n>", "auctions per second of the traffic generator (0: none)").argParser(wholeNumber(10_000)).default(5))
    .addHelpText("after", "\nExamples:\n  $ npm start\n  $ PORT=9000 npm start\n  $ adxkit demo --db :memory: --port 0 --rate 20")
    .action(async ({ db: dbOption, port, rows, rate }: { db: string; port: number; rows: number; rate: number }) => {
      // A taken port ends the demo now, before a minute of seeding.
      await assertPortFree("127.0.0.1", port);
      const db = dbOption === ":memory:" ? dbOption : resolve(dbOption);
      if (db !== ":memory:") mkdirSync(dirname(db), { recursive: true });
      // A server: DuckDB leaves the event loop a core (docs/reports.md).
      const store = await openStore({ db, duckdbThreads: serveThreads(), background: serveBackground() });
      const bidders: RunningBidder[] = [];
      let server: RunningServer | undefined;
      // Whatever fails after this point closes what was started, so the process ends (exit 1).
      const closeAll = async () => {
        await server?.close();
        for (const b of bidders) await b.close();
        await store.close();
      };
      try {
        // An in-memory demo keeps its side files in a temporary folder, never in the package.
        const sideFolder = db === ":memory:" ? mkdtempSync(join(tmpdir(), "adxkit-demo-")) : dirname(db);
        const credentials = await demoCredentials(store, join(sideFolder, "demo-credentials.json"), rows);
        const payloads = examplePayloads();
        for (const [i, price] of demoPrices(payloads).entries()) {
          bidders.push(await startBidder({ id: `dsp-${i + 1}`, seat: `seat-${i + 1}`, price, fill: 0.8, latency: [2, 15], seed: i + 1 }));
        }
        const biddersFile = join(sideFolder, "demo-bidders.json");
        // The reference bidders listen on 127.0.0.1: their win and billing notices need allow_private_addresses.
        writeFileSync(biddersFile, JSON.stringify(bidders.map((b, i) => ({ id: `dsp-${i + 1}`, endpoint: b.endpoint, seat: `seat-${i + 1}`, allow_private_addresses: true })), null, 2));
        server = await startServer({ db, store, port, biddersFile, logLevel: "warn" });
        const stopTraffic = rate > 0 ? startTraffic(server.url, Math.max(1, Math.round(1000 / rate)), credentials.supply.publisher_ids, payloads, credentials.supply.auction_key) : async () => {};
        // The curl of the printout sells the first example request as a demo publisher: its key may run only theirs.
        const requestFile = join(sideFolder, "demo-request.json");
        writeFileSync(requestFile, JSON.stringify({ ...payloads[0], app: { ...payloads[0].app, publisher: { id: credentials.supply.publisher_ids[0] } } }, null, 2));
        process.stdout.write(demoPrintout(server.url, credentials, rate, requestFile));
        const stop = async () => {
          await stopTraffic();
          await closeAll();
          process.exit(0);
        };
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      } catch (error) {
        await closeAll().catch(() => undefined);
        throw error;
      }
    });
}

/** What the demo prints once it runs: where things are, the demo credentials, commands to paste. */
function demoPrintout(url: string, credentials: DemoCredentials, rate: number, requestFile: string): string {
  const { demand, supply } = credentials;
  return `
adxkit is running at ${url}
  docs:      ${url}/docs/   (${url}/ redirects there)
  exchange:  POST ${url}/openrtb2/auction  (3 reference bidders, ${rate} demo auctions/s)
  operator:  ${url}/health  ${url}/ready  ${url}/metrics

Demo credentials (demo data only):
  demand (A), bidder dsp-1:        x-userid ${demand.userid}  x-authorization ${demand.authorization}
  supply (B), pub-1, pub-2, pub-3: x-userid ${supply.userid}  x-authorization ${supply.authorization}
                                   auction key ${supply.auction_key}

Try:
  curl -s '${url}/api/report/demand_report_v2?x-userid=${demand.userid}&x-authorization=${demand.authorization}&start=2026-10-01T00:00:00&end=2026-10-31T23:59:59&dimensions[]=date&metrics[]=revenue&metrics[]=ecpm'
  curl -s -X POST ${url}/api/report/v1 -H 'content-type: application/json' -H 'x-userid: ${supply.userid}' -H 'x-authorization: ${supply.authorization}' \\
       -d '{"start":"2026-10-01T00:00:00","end":"2026-10-31T23:59:59","dimensions":["country"],"metrics":["revenue","impression","fill_rate"],"limit":5}'
  curl -s -X POST ${url}/openrtb2/auction -H 'content-type: application/json' -H 'authorization: Bearer ${supply.auction_key}' -d @${requestFile}
  curl -s ${url}/ready
  curl -s ${url}/metrics | grep '^adxkit_auctions_total'
Today's auctions show up in the reports for today's date (start/end around ${new Date().toISOString().slice(0, 10)}).
Stop with Ctrl-C.
`;
}
