/**
 * Soak test on loopback (`npm run soak`): see USAGE. Three processes so that the load generator
 * does not share the server's event loop: this one (load, measurements, table), the bidders, and
 * the server (which samples its own RSS every second).
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance, type IntervalHistogram } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { buildApp, serverLimits } from "../service/app.js";
import { loadBidders, registerExchange, SealKeyRing, sealKey, type ExchangeHandle } from "../service/auction/index.js";
import { startBidder } from "../service/bidder/index.js";
import { openStore } from "../service/store/index.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";

const USAGE = `Usage: [VAR=value …] npm run soak    (or npx tsx bench/soak.ts)

Soak test on loopback: the server (report APIs and exchange, DuckDB in memory, circuit breaker on
as in \`adxkit serve\`), three reference bidders and one bidder that injects faults, under a steady
mixed load (auctions, the billing call of every winning bid, supply and demand report queries) for
SOAK_SECONDS, then it stops by itself. At the end: requests per kind, failures (must be 0),
p50/p99 per kind, RSS start/max/end, the faults injected, and "lost": billing calls acknowledged
(204) minus the impressions the supply report shows after a final flush of the exchange's facts.
Exits 1 when a failure or a lost impression is seen.

Environment:
  SOAK_SECONDS=N       seconds of steady load (default 60, at most 600)
  SOAK_RATE=N          auctions a second (default 100)
  SOAK_FAULT_RATE=X    share of the faulty bidder's calls that misbehave, 0-1 (default 0.5)

Examples:
  npm run soak
  SOAK_SECONDS=300 SOAK_RATE=200 npm run soak`;

const self = fileURLToPath(import.meta.url);
const role = process.argv[2];
const MAX_SECONDS = 600;
// The soak's own children are forked with their role ("--bidders-child", "--server-child") as the first argument.
const command = benchCommand(USAGE, {}, role === "--bidders-child" || role === "--server-child" ? [] : process.argv.slice(2));
const soakSeconds = command.integer("SOAK_SECONDS", 60, 1);
if (soakSeconds > MAX_SECONDS) command.fail(`SOAK_SECONDS must be at most ${MAX_SECONDS} (got ${soakSeconds})`);
const soakRate = command.number("SOAK_RATE", 100, 1);
const faultRate = command.number("SOAK_FAULT_RATE", 0.5);
if (faultRate > 1) command.fail(`SOAK_FAULT_RATE must be 0-1 (got ${faultRate})`);

// ---------------------------------------------------------------------------------------------
// Child: the bidders. Three reference bidders and "dsp-faulty", which answers a share of its
// calls with a fault (counted by kind) and the others with a no-bid.

const FAULT_KINDS = ["hang", "slow", "reset", "http-500", "non-json", "other-id", "garbage-2MiB"] as const;
type FaultKind = (typeof FAULT_KINDS)[number];

async function bidders(): Promise<void> {
  const reference = await Promise.all(
    [[0.5, 3], [1, 4], [0.8, 2.5]].map(([min, max], i) =>
      startBidder({ id: `dsp-${i + 1}`, seat: `seat-${i + 1}`, price: [min, max], fill: 0.8, latency: [2, 15], seed: i + 1 }),
    ),
  );
  const injected: Record<string, number> = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0]));
  let calls = 0;
  const garbage = Buffer.alloc(2 * 1024 * 1024, "#");
  const faulty = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      calls++;
      let id = "?";
      try {
        id = JSON.parse(Buffer.concat(chunks).toString("utf8")).id;
      } catch {
        // not JSON: answer anyway
      }
      if (Math.random() >= faultRate) return void res.writeHead(204).end();
      const kind: FaultKind = FAULT_KINDS[Math.floor(Math.random() * FAULT_KINDS.length)];
      injected[kind]++;
      const json = (status: number, body: string) => res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
      switch (kind) {
        case "hang": // never answers; the socket is dropped after 5 s if the exchange has not aborted it
          setTimeout(() => req.socket.destroy(), 5000).unref();
          return;
        case "slow":
          return void setTimeout(() => !res.destroyed && res.writeHead(204).end(), 400);
        case "reset":
          return void req.socket.destroy();
        case "http-500":
          return json(500, '{"error":"boom"}');
        case "non-json":
          return void res.writeHead(200, { "content-type": "text/html" }).end("<html>not json</html>");
        case "other-id":
          return json(200, JSON.stringify({ id: `not-${id}`, seatbid: [{ bid: [{ id: "x", impid: "1", price: 99, adm: "<div>x</div>" }] }] }));
        case "garbage-2MiB":
          return void res.writeHead(200, { "content-type": "application/json" }).end(garbage);
      }
    });
  });
  faulty.on("clientError", (_e, socket) => socket.destroy());
  await new Promise<void>((resolve) => faulty.listen(0, "127.0.0.1", resolve));
  const faultyEndpoint = `http://127.0.0.1:${(faulty.address() as { port: number }).port}/bid`;
  process.send!({ endpoints: [...reference.map((b) => b.endpoint), faultyEndpoint] });
  process.on("message", (message: { stats?: boolean }) => {
    if (message.stats) {
      const ref = Object.fromEntries(reference.map((b, i) => [`dsp-${i + 1}`, { requests: b.stats().requests, wins: b.stats().wins, bills: b.stats().bills }]));
      process.send!({ stats: { reference: ref, faulty: { calls, injected } } });
    }
  });
  process.on("disconnect", () => {
    faulty.closeAllConnections();
    faulty.close();
    void Promise.all(reference.map((b) => b.close())).then(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------------
// Child: the server. The app of `adxkit serve` (buildApp with the exchange registered the way
// startServer does: circuit breaker on, a spool on disk) so that the exchange's stats and flush
// are reachable.

interface RssSample {
  t: number;
  rss: number;
  heapUsed: number;
}

async function server(endpoints: string[]): Promise<void> {
  const store = await openStore({ db: ":memory:" });
  const demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
  const supply = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
  const ids = ["dsp-1", "dsp-2", "dsp-3", "dsp-faulty"];
  const dir = mkdtempSync(join(tmpdir(), "adxkit-soak-"));
  const biddersFile = join(dir, "bidders.json");
  writeFileSync(biddersFile, JSON.stringify(endpoints.map((endpoint, i) => ({ id: ids[i], endpoint, seat: `seat-${i + 1}`, allow_private_addresses: true }))));
  let handle!: ExchangeHandle;
  const bidderConfigs = await loadBidders(biddersFile);
  const app = await buildApp({
    store,
    logger: { level: "error" },
    extend: (instance) => {
      // As startServer: the exchange's burl points at the public URL (rewritten by the load generator).
      handle = registerExchange(instance, { bidders: bidderConfigs, sink: store, billingKeys: new SealKeyRing([sealKey(randomBytes(32))]), publicUrl: "http://127.0.0.1", circuitBreaker: {}, spoolDir: join(dir, "spool"), openAuction: true });
    },
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const started = performance.now();
  // Event-loop delay of the server: a stall here and not in the load generator is the server's own.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const samples: RssSample[] = [];
  const sample = () => {
    const m = process.memoryUsage();
    samples.push({ t: (performance.now() - started) / 1000, rss: m.rss, heapUsed: m.heapUsed });
  };
  sample();
  const sampler = setInterval(sample, 1000);
  process.send!({ url, demand, supply });
  process.on("message", async (message: { cmd: string }) => {
    if (message.cmd === "flush") {
      const flushed = await handle.flushFacts();
      process.send!({ flushed });
    } else if (message.cmd === "stats") {
      sample();
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.();
      gc?.();
      const afterGc = process.memoryUsage();
      process.send!({ stats: handle.stats(), samples, afterGc: { rss: afterGc.rss, heapUsed: afterGc.heapUsed, gc: gc !== undefined }, loopDelay: delays(loopDelay) });
    }
  });
  process.on("disconnect", async () => {
    clearInterval(sampler);
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

// ---------------------------------------------------------------------------------------------
// The load generator and the report.

function start(args: string[]): Promise<{ child: ChildProcess; message: any }> {
  // --expose-gc: the server reports its heap after a full collection at the end.
  const child = fork(self, args, { execArgv: [...process.execArgv, "--expose-gc"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("message", (message) => resolve({ child, message }));
    child.once("exit", (code) => reject(new Error(`soak child ${args[0]} exited with ${code}`)));
  });
}

function ask<T>(child: ChildProcess, message: object, key: string): Promise<T> {
  return new Promise((resolve) => {
    const listener = (m: any) => {
      if (m && key in m) {
        child.off("message", listener);
        resolve(m as T);
      }
    };
    child.on("message", listener);
    child.send(message);
  });
}

type Kind = "auction" | "billing" | "report-supply" | "report-demand";
const KINDS: Kind[] = ["auction", "billing", "report-supply", "report-demand"];

class Recorder {
  readonly sent: Record<Kind, number> = { auction: 0, billing: 0, "report-supply": 0, "report-demand": 0 };
  readonly failed: Record<Kind, number> = { auction: 0, billing: 0, "report-supply": 0, "report-demand": 0 };
  readonly times: Record<Kind, number[]> = { auction: [], billing: [], "report-supply": [], "report-demand": [] };
  readonly failures: string[] = [];
  inFlight = 0;

  async run(kind: Kind, work: () => Promise<boolean | string>): Promise<void> {
    this.sent[kind]++;
    this.inFlight++;
    const t0 = performance.now();
    let verdict: boolean | string;
    try {
      verdict = await work();
    } catch (error) {
      verdict = `${(error as Error).message}`;
    }
    this.times[kind].push(performance.now() - t0);
    this.inFlight--;
    if (verdict !== true) {
      this.failed[kind]++;
      if (this.failures.length < 20) this.failures.push(`${kind}: ${verdict === false ? "failed" : verdict}`);
    }
  }
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/** p99 and max of an event-loop delay histogram, in milliseconds. */
function delays(histogram: IntervalHistogram): { p99: number; max: number } {
  return { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 };
}

async function main(): Promise<void> {
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const seconds = soakSeconds;
  const rate = soakRate;
  const rates: Record<Exclude<Kind, "billing">, number> = { auction: rate, "report-supply": 2, "report-demand": 1 };
  // A hard stop whatever happens: the steady phase plus two minutes for start-up and the end.
  const guard = setTimeout(() => {
    process.stderr.write("soak: hard time limit reached, stopping\n");
    process.exit(2);
  }, (seconds + 120) * 1000);
  guard.unref();

  const { child: bidderProcess, message: b } = await start(["--bidders-child"]);
  const { child: serverProcess, message: s } = await start(["--server-child", JSON.stringify(b.endpoints)]);
  const url: string = s.url;
  const pool = new Pool(url, { connections: 64, pipelining: 1 });
  const rec = new Recorder();
  const payloads = ["banner", "video", "native"].map((name) => readFileSync(new URL(`./payloads/${name}.json`, import.meta.url), "utf8"));
  const parsedPayloads = payloads.map((p) => JSON.parse(p));
  const window = { start: `${day(-1)}T00:00:00`, end: `${day(0)}T23:59:59` };
  let n = 0;
  let droppedByClient = 0;
  let acknowledged = 0;

  const billing = (burl: string) =>
    rec.run("billing", async () => {
      const target = new URL(burl);
      const res = await pool.request({ path: target.pathname + target.search, method: "GET" });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) acknowledged++;
      return res.statusCode === 204 || `HTTP ${res.statusCode}`;
    });
  const auction = () =>
    rec.run("auction", async () => {
      const body = JSON.stringify({ ...parsedPayloads[n % 3], id: `soak-${process.pid}-${n++}` });
      const res = await pool.request({ path: "/openrtb2/auction", method: "POST", headers: { "content-type": "application/json" }, body });
      const text = await res.body.text();
      if (res.statusCode === 204) return true;
      if (res.statusCode !== 200) return `HTTP ${res.statusCode} ${text.slice(0, 200)}`;
      for (const seat of JSON.parse(text).seatbid ?? []) for (const bid of seat.bid ?? []) if (bid.burl) void billing(bid.burl);
      return true;
    });
  const reportSupply = () =>
    rec.run("report-supply", async () => {
      const res = await pool.request({
        path: "/api/report/v1",
        method: "POST",
        headers: { "content-type": "application/json", "x-userid": s.supply.userid, "x-authorization": s.supply.authorization },
        body: JSON.stringify({ ...window, metrics: ["request", "response", "impression", "revenue", "fill_rate"], dimensions: ["country", "ad_format"], limit: 100 }),
      });
      const answer = JSON.parse(await res.body.text());
      return (res.statusCode === 200 && answer.status?.code === 0) || `HTTP ${res.statusCode} ${JSON.stringify(answer.status)}`;
    });
  const reportDemand = () =>
    rec.run("report-demand", async () => {
      const q = new URLSearchParams({ "x-userid": s.demand.userid, "x-authorization": s.demand.authorization, ...window });
      q.append("dimensions[]", "ad_format");
      for (const m of ["request", "response", "impression", "revenue", "ecpm"]) q.append("metrics[]", m);
      const res = await pool.request({ path: `/api/report/demand_report_v2?${q}`, method: "GET" });
      const answer = JSON.parse(await res.body.text());
      return (res.statusCode === 200 && answer.status?.code === 0) || `HTTP ${res.statusCode} ${JSON.stringify(answer.status)}`;
    });
  const senders: Record<Exclude<Kind, "billing">, () => Promise<void>> = { auction, "report-supply": reportSupply, "report-demand": reportDemand };

  process.stdout.write(`soak: ${seconds} s at ${rate} auctions/s (+ billing per win, ${rates["report-supply"]} supply and ${rates["report-demand"]} demand reports/s) against ${url}\n`);
  const t0 = performance.now();
  const scheduled: Record<string, number> = { auction: 0, "report-supply": 0, "report-demand": 0 };
  const MAX_IN_FLIGHT = 1000;
  let lastLog = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = (performance.now() - t0) / 1000;
      if (elapsed >= seconds) {
        clearInterval(tick);
        return resolve();
      }
      for (const kind of Object.keys(senders) as (keyof typeof senders)[]) {
        const due = Math.floor(elapsed * rates[kind]) - scheduled[kind];
        for (let i = 0; i < due; i++) {
          scheduled[kind]++;
          if (rec.inFlight >= MAX_IN_FLIGHT) droppedByClient++;
          else void senders[kind]();
        }
      }
      if (elapsed - lastLog >= 10) {
        lastLog = Math.floor(elapsed);
        process.stdout.write(`  ${lastLog} s: ${rec.sent.auction} auctions, ${rec.sent.billing} billing calls, in flight ${rec.inFlight}\n`);
      }
    }, 10);
  });
  // Drain what is in flight (bounded), then the final flush and the count.
  const drainUntil = performance.now() + 10_000;
  while (rec.inFlight > 0 && performance.now() < drainUntil) await sleep(20);
  const stillInFlight = rec.inFlight;
  await ask(serverProcess, { cmd: "flush" }, "flushed");
  const report = await pool.request({
    path: "/api/report/v1",
    method: "POST",
    headers: { "content-type": "application/json", "x-userid": s.supply.userid, "x-authorization": s.supply.authorization },
    body: JSON.stringify({ ...window, metrics: ["request", "response", "impression"], dimensions: [] }),
  });
  const totals = JSON.parse(await report.body.text()).data?.data?.[0] ?? { request: 0, response: 0, impression: 0 };
  const { stats, samples, afterGc, loopDelay: serverDelay } = await ask<{ stats: any; samples: RssSample[]; afterGc: { rss: number; heapUsed: number; gc: boolean }; loopDelay: { p99: number; max: number } }>(serverProcess, { cmd: "stats" }, "stats");
  const generatorDelay = delays(loopDelay);
  const { stats: bidderStats } = await ask<{ stats: any }>(bidderProcess, { stats: true }, "stats");
  await pool.close();
  serverProcess.disconnect();
  bidderProcess.disconnect();

  const rows: string[][] = [["kind", "sent", "failures", "p50 ms", "p99 ms", "max ms"]];
  for (const kind of KINDS) {
    const sorted = [...rec.times[kind]].sort((a, b) => a - b);
    rows.push([kind, String(rec.sent[kind]), String(rec.failed[kind]), percentile(sorted, 50).toFixed(1), percentile(sorted, 99).toFixed(1), (sorted.at(-1) ?? NaN).toFixed(1)]);
  }
  printTable(`Soak: ${seconds} s steady load over loopback, ${rate} auctions/s (tmax 150/150/200 ms), server RSS sampled every second`, rows);

  const rss = samples.map((x) => x.rss);
  const at = (sec: number) => samples.find((x) => x.t >= sec) ?? samples.at(-1)!;
  const lost = acknowledged - Number(totals.impression);
  const exchangeFaults = stats.bidders["dsp-faulty"]?.faults ?? {};
  const injectedTotal = Object.values(bidderStats.faulty.injected as Record<string, number>).reduce((a, b) => a + b, 0);
  const lines = [
    ``,
    `RSS (server process): start ${mib(rss[0])}, after 10 s ${mib(at(10).rss)}, max ${mib(Math.max(...rss))}, end ${mib(rss.at(-1)!)}; heap used start ${mib(samples[0].heapUsed)}, end ${mib(samples.at(-1)!.heapUsed)} (${samples.length} samples)`,
    `RSS every 10 s: ${samples.filter((_, i) => i % 10 === 0).map((x) => `${x.t.toFixed(0)}s ${(x.rss / 1048576).toFixed(0)}`).join(", ")} MiB`,
    `after the run${afterGc.gc ? " and a full gc" : " (no gc available)"}: RSS ${mib(afterGc.rss)}, heap used ${mib(afterGc.heapUsed)}; billing token ids held in memory: ${stats.seenBillingTokens}`,
    `faults injected by dsp-faulty: ${injectedTotal} of ${bidderStats.faulty.calls} calls ${JSON.stringify(bidderStats.faulty.injected)}`,
    `faults counted by the exchange for dsp-faulty: ${JSON.stringify(exchangeFaults)}; circuit ${JSON.stringify(stats.circuits?.["dsp-faulty"])}`,
    `exchange: ${stats.auctions} auctions, ${stats.answered} answered 200, ${stats.noBid} no-bid 204, late in handler (> tmax + 10 ms) ${stats.late}, billing ${JSON.stringify(stats.billing)}`,
    `event-loop delay, p99 / max: server ${serverDelay.p99.toFixed(0)} / ${serverDelay.max.toFixed(0)} ms, load generator ${generatorDelay.p99.toFixed(0)} / ${generatorDelay.max.toFixed(0)} ms (a stall in both is the machine's, in the server alone the server's)`,
    `spool: ${stats.spool ? `${stats.facts.events} events in ${stats.spool.appended} lines, ${stats.spool.writes} writes (group commit: one line per event-loop turn), ${stats.spool.syncs} fdatasyncs, ${stats.spool.failures} failures; spool failures counted by the exchange ${stats.spoolFailures}` : "none"}`,
    `reference bidders (requests received): ${JSON.stringify(bidderStats.reference)}`,
    `circuits: ${Object.entries(stats.circuits ?? {}).map(([id, c]: [string, any]) => `${id} opened ${c.opened}, skipped ${c.skipped}`).join("; ")}`,
    `client: dropped before sending (over ${MAX_IN_FLIGHT} in flight) ${droppedByClient}, still in flight at the end ${stillInFlight}`,
    `supply report after the final flush: request ${totals.request}, response ${totals.response}, impression ${totals.impression}`,
    `billing calls acknowledged (2xx): ${acknowledged}`,
    `server limits (service/app.ts serverLimits): body ${serverLimits.bodyLimit} B, headers ${serverLimits.maxHeaderSize} B, request timeout ${serverLimits.requestTimeoutMs} ms, headers timeout ${serverLimits.headersTimeoutMs} ms, connections ${serverLimits.maxConnections}, keep-alive ${serverLimits.keepAliveTimeoutMs} ms`,
    `lost: ${lost}`,
  ];
  process.stdout.write(lines.join("\n") + "\n");
  if (rec.failures.length > 0) process.stdout.write(`first failures:\n  ${rec.failures.join("\n  ")}\n`);
  const failures = KINDS.reduce((total, kind) => total + rec.failed[kind], 0);
  process.exitCode = failures > 0 || lost !== 0 || droppedByClient > 0 ? 1 : 0;
}

if (role === "--bidders-child") await bidders();
else if (role === "--server-child") await server(JSON.parse(process.argv[3]));
else await main();
