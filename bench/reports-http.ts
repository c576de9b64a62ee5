/**
 * Reports through HTTP, the targets of issue 18, DuckDB and ClickHouse side by side: see USAGE.
 * The store loads with DuckDB's default threads (every core, as `adxkit ingest` runs) and serves as
 * `adxkit serve` does (one core less, its background threads at serve's default nice value). The
 * reference bidders run in a child process, the heavy loops and probes in another. Loopback only,
 * bounded: every wait is bounded (`within`); a step that does not finish fails the run naming it,
 * and a process that would not exit once done says what keeps it alive and exits 1.
 */
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import type { ReportStore } from "../service/store/index.js";
import { loadCompiled } from "./compiled.js";
import { benchCommand } from "./command-line.js";
import { benchBidders } from "./exchange-fixtures.js";
import { largeAnswers } from "./large-answers.js";
import { printTable } from "./table.js";

const USAGE = `Usage: [VAR=value …] npx tsx bench/reports-http.ts

Reports through HTTP (issue 18's targets), DuckDB and ClickHouse side by side, ClickHouse where a
server answers. Per engine: 10 M supply + 1 M demand seeded facts over one month loaded into a fresh
store (the ingest rate, rollups maintained), then one server with the report APIs and the exchange,
and through HTTP the month total, the month by date × country, the month by date × country × app
on 5 countries (31,000 rows), medians of RUNS; then the p99 of a cheap request and of an auction,
idle and while two loops of that heavy report run for HEAVY_S seconds. Run \`npm run build\` first
(it loads dist/). A 10 M run takes a few minutes per engine on a 2-core machine.

Environment:
  ROWS=N               supply facts seeded (default 10000000; demand facts are a tenth)
  RUNS=N               timed requests of each report (default 20)
  WARMUP=N             requests of each report before its timed ones (default 1)
  HEAVY_S=N            seconds of heavy reports while the probes run (default 4)
  DUCKDB_FILE=PATH     serve DuckDB from a file loaded before (by this bench or \`adxkit seed\`) with
                       the same ROWS: no ingest figure, the read figures in a minute; it gains one
                       account per run, so use a copy
  WARM_UP=N            the server's warm-up requests before it listens (default serve's; 0: none)
  BACKGROUND_NICE=N    the server's background threads at nice N, 0-19 (default serve's; 0: unchanged)
  BACKGROUND_IDLE=1    the same threads also under SCHED_IDLE (serve's --background-idle; default serve's)
  THREADS=1            print, for the heavy phase, each server thread's time running and waiting for
                       a core (Linux), both processes' event loop delay and the cheap requests' time
                       inside the server
  CPU_PROFILE=FILE     write the server's main thread's CPU profile of the heavy phase there
                       (sampled every 100 µs)
  ADXKIT_CLICKHOUSE_URL=URL  the ClickHouse server (default http://127.0.0.1:18123)

Examples:
  ROWS=1000000 npx tsx bench/reports-http.ts
  ADXKIT_CLICKHOUSE_URL=http://127.0.0.1:1 DUCKDB_FILE=/tmp/b10m-copy.duckdb npx tsx bench/reports-http.ts`;

// The bench's own children ("bidders", "client") are forked with their role as the argument.
const role = process.argv[2] === "bidders" || process.argv[2] === "client" ? process.argv[2] : "bench";
const command = benchCommand(USAGE, {}, role === "bench" ? process.argv.slice(2) : []);
const rows = command.integer("ROWS", 10_000_000, 1);
const runs = command.integer("RUNS", 20, 1);
const heavySeconds = command.number("HEAVY_S", 4, 0.1);
/**
 * Requests of each report before its RUNS timed ones (default 1). A fresh server's first requests
 * run code V8 has not optimised yet: the month total's median 7.5–12.2 ms with 1, 3.5–4.8 ms
 * after 200, at load 3 (docs/benchmarks.md, "The read side, part eight").
 */
const warmup = command.integer("WARMUP", 1, 1);
/** WARM_UP=<n>: the server's warm-up requests before it listens; default serve's. */
const warmUpGiven = process.env.WARM_UP === undefined ? undefined : command.integer("WARM_UP", 0);
/** A DuckDB file loaded before (it gains one account per run): the load is skipped. */
const duckdbFile = process.env.DUCKDB_FILE;
/** BACKGROUND_NICE=<0-19>: the server's background threads at that nice value (`--background-nice`; 0: unchanged); default serve's. */
const backgroundNiceGiven = process.env.BACKGROUND_NICE === undefined ? undefined : command.integer("BACKGROUND_NICE", 0);
if (backgroundNiceGiven !== undefined && backgroundNiceGiven > 19) command.fail(`BACKGROUND_NICE must be 0-19 (got ${backgroundNiceGiven})`);
/** BACKGROUND_IDLE=1: the same threads also under SCHED_IDLE (`--background-idle`; 0: not); default serve's. */
const backgroundIdleGiven = process.env.BACKGROUND_IDLE === undefined ? undefined : process.env.BACKGROUND_IDLE === "1";
/** THREADS=1: print each server thread's run / wait during heavy reports and both processes' event loop delay. */
const showThreads = process.env.THREADS === "1";
/** CPU_PROFILE=<file>: the server's main thread's CPU profile during the heavy phase written there. */
const cpuProfile = process.env.CPU_PROFILE;
const clickhouseServer = (process.env.ADXKIT_CLICKHOUSE_URL ?? "http://127.0.0.1:18123").replace(/\/+$/, "");
/** How long one HTTP request of the clients may take (undici's own default is 5 minutes). */
const requestTimeoutMs = 60_000;

/** `promise`, or a failure naming `what` once `ms` have passed without it settling. */
function within<T>(what: string, ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The first message of a child process, or a failure when it exits first or says nothing for `ms`. */
function firstMessage<T>(child: ChildProcess, what: string, ms: number): Promise<T> {
  const answer = new Promise<T>((resolve, reject) => {
    const answered = (m: unknown) => {
      // A phase's start (the client's probes) is no answer.
      if ((m as Partial<PhaseMessage>)?.phase !== undefined) return;
      child.off("message", answered);
      resolve(m as T);
    };
    child.on("message", answered);
    child.once("exit", (code, signal) => reject(new Error(`${what} ended (exit ${code ?? signal}) before answering`)));
  });
  return within(what, ms, answer).catch((error: unknown) => {
    child.kill();
    throw error;
  });
}

if (role === "bidders") {
  // Child: the reference bidders (~5 ms each), off the server's event loop.
  const { startBidder } = await loadCompiled<typeof import("../service/bidder/index.js")>("service/bidder/index.js");
  const running = await Promise.all(benchBidders([4, 6]).map((options) => startBidder(options)));
  process.send!({ endpoints: running.map((b) => b.endpoint) });
  process.on("disconnect", () => void Promise.all(running.map((b) => b.close())).then(() => process.exit(0)));
} else if (role === "client") {
  process.once("message", async (job) => {
    // Exits once the answer is sent: its idle keep-alive sockets must not keep it (and so the bench) alive.
    process.send!(await runClient(job as ClientJob), () => process.exit(0));
  });
} else {
  await main();
  // Everything was closed: an event loop still alive past this says what was left open.
  setTimeout(() => {
    process.stderr.write(`the bench did not exit 10 s after it finished; still open: ${process.getActiveResourcesInfo().join(", ")}\n`);
    process.exit(1);
  }, 10_000).unref();
}

/** The client's word that a phase of its probes starts (or that they ended). */
interface PhaseMessage {
  phase: "idle" | "heavy" | "end";
}

/** Each thread's time running and waiting for a core so far, in ms, by thread id (Linux's schedstat; none elsewhere). */
function threadsSchedstat(): Map<number, { run: number; wait: number }> {
  const out = new Map<number, { run: number; wait: number }>();
  try {
    for (const id of readdirSync("/proc/self/task")) {
      try {
        const [run, wait] = readFileSync(`/proc/self/task/${id}/schedstat`, "utf8").split(" ").map(Number);
        out.set(Number(id), { run: run / 1e6, wait: wait / 1e6 });
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  } catch {
    // Not Linux.
  }
  return out;
}

/** The event loop's thread's time running and waiting for a core so far, in ms (Linux's schedstat), or undefined. */
function eventLoopSchedstat(): { run: number; wait: number; at: number } | undefined {
  try {
    const [run, wait] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ").map(Number);
    return { run: run / 1e6, wait: wait / 1e6, at: performance.now() };
  } catch {
    return undefined;
  }
}

interface EngineFigures {
  ingestRate: number;
  total: number;
  byCountry: number;
  grouped: number;
  groupedRows: number;
  checks: string[];
  cheapIdle: number;
  cheapHeavy: number;
  auctionIdle: number;
  auctionHeavy: number;
  tmax: number;
  heavyReports: number;
  /** The event loop's wait for a core, ms per second, idle and during heavy reports (Linux). */
  waitIdle?: number;
  waitHeavy?: number;
}

async function main(): Promise<void> {
  const { openStore, seedPlan } = await loadCompiled<typeof import("../service/store/index.js")>("service/store/index.js");
  const { serveBackground, serveThreads } = await loadCompiled<typeof import("../service/store/duckdb/connection.js")>("service/store/duckdb/connection.js");
  const { buildApp } = await loadCompiled<typeof import("../service/app.js")>("service/app.js");
  const { serveDefault } = await loadCompiled<typeof import("../service/serve-defaults.js")>("service/serve-defaults.js");
  // The report route warmed before listening, as `adxkit serve` does (WARM_UP=0: none).
  const warmUpRequests = warmUpGiven ?? serveDefault("warmUpRequests");
  const { registerExchange, SealKeyRing, sealKey } = await loadCompiled<typeof import("../service/auction/index.js")>("service/auction/index.js");
  const bidders = fork(fileURLToPath(import.meta.url), ["bidders"], { execArgv: process.execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const { endpoints } = await firstMessage<{ endpoints: string[] }>(bidders, "the bidders' process", 60_000);
  const plan = seedPlan({ days: 31, rows });
  const serveDefaults = serveBackground();
  const background = { nice: backgroundNiceGiven ?? serveDefaults.nice, idle: backgroundIdleGiven ?? serveDefaults.idle };
  const fmt = (n: number, digits = 1) => n.toLocaleString("en-US", { maximumFractionDigits: digits });
  process.stderr.write(`seed: ${fmt(plan.supplyRows)} supply + ${fmt(plan.demandRows)} demand facts, ${plan.start} to ${plan.end}\n`);

  /** Loads the seeded facts into a store `open` gives, then serves from the store `reopen` gives (the same data). */
  async function measure(name: string, open: () => Promise<ReportStore>, reopen: (loaded: ReportStore) => Promise<ReportStore>): Promise<EngineFigures> {
    const t0 = performance.now();
    const loading = await open();
    let ingestRate = Number.NaN;
    if (name !== "DuckDB" || duckdbFile === undefined) {
      process.stderr.write(`${name}: ingesting…\n`);
      const loaded = await within(`${name}'s load`, 30 * 60_000, loading.ingest({ seed: { days: 31, rows, seed: 7 } }));
      ingestRate = loaded / ((performance.now() - t0) / 1000);
      process.stderr.write(`${name}: ${fmt(loaded)} facts at ${fmt(ingestRate, 0)}/s; serving…\n`);
    }
    const store = await reopen(loading);
    const account = await store.createAccount({ side: "supply", publisher_ids: Array.from({ length: 50 }, (_, i) => `pub-${i + 1}`) });
    // The auction checks its caller's key against the store, as `adxkit serve` does.
    const auctionKey = await store.issueAuctionKey(account.userid);
    /** Cheap requests' times in the server (THREADS=1). */
    const cheapInServer: number[] = [];
    const spool = mkdtempSync(join(tmpdir(), "adxkit-bench-spool-"));
    let exchange: ReturnType<typeof registerExchange> | undefined;
    const app = await buildApp({
      store,
      warmUpRequests,
      extend: (server) => {
        // THREADS=1: the cheap requests' time in the server, from Fastify's first hook to the answer's end.
        if (showThreads) {
          server.addHook("onRequest", async (request) => {
            if (request.headers["content-length"] === "2") (request as unknown as { t0: number }).t0 = performance.now();
          });
          server.addHook("onResponse", async (request) => {
            const t0 = (request as unknown as { t0?: number }).t0;
            if (t0 !== undefined) cheapInServer.push(performance.now() - t0);
          });
        }
        exchange = registerExchange(server, {
          bidders: endpoints.map((endpoint, i) => ({ id: `bench-${i + 1}`, endpoint, seat: `seat-${i + 1}` })),
          sink: store,
          auctionKeys: store,
          billingKeys: new SealKeyRing([sealKey("bench-secret")]),
          publicUrl: "http://127.0.0.1:8080",
          spoolDir: spool,
          noticeThread: true,
          circuitBreaker: {},
        });
      },
    });
    try {
      await app.listen({ host: "127.0.0.1", port: 0 });
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const job: ClientJob = { name, base, headers: { "content-type": "application/json", "x-userid": account.userid, "x-authorization": account.authorization }, auctionKey: auctionKey! };
      // The clients run in a child process: what the server's event loop does is measured, not the bench's parsing of 31,000 rows.
      const client = fork(fileURLToPath(import.meta.url), ["client"], { execArgv: process.execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
      // Three reports RUNS + 1 times each, 2 s of idle probes, HEAVY_S s of heavy reports: well within it.
      const answer = firstMessage<ClientFigures>(client, "the bench's client process", 15 * 60_000);
      // Where the event loop's thread was at each phase's start: its wait for a core per second of each.
      const phases = new Map<string, ReturnType<typeof eventLoopSchedstat>>();
      // THREADS=1: every thread's run and wait during the heavy phase, and the event loop's delay histogram.
      const threadsAt = new Map<string, Map<number, { run: number; wait: number }>>();
      const loopDelay = monitorEventLoopDelay({ resolution: 1 });
      const profiler = new Session();
      if (cpuProfile !== undefined) profiler.connect();
      if (showThreads) loopDelay.enable();
      client.on("message", (m: Partial<PhaseMessage>) => {
        if (m?.phase === undefined) return;
        phases.set(m.phase, eventLoopSchedstat());
        if (!showThreads) return;
        threadsAt.set(m.phase, threadsSchedstat());
        if (m.phase === "heavy") loopDelay.reset();
        if (m.phase === "heavy") cheapInServer.length = 0;
        if (m.phase === "heavy" && cpuProfile !== undefined) void profiler.post("Profiler.enable").then(async () => {
          // Every 100 µs: a busy stretch's samples then tell its CPU time (one sample per tick the thread ran).
          await profiler.post("Profiler.setSamplingInterval", { interval: 100 });
          await profiler.post("Profiler.start");
        });
        if (m.phase === "end" && cpuProfile !== undefined) void profiler.post("Profiler.stop").then(({ profile }) => writeFileSync(cpuProfile, JSON.stringify(profile)));
        if (m.phase === "end") {
          loopDelay.disable();
          const seconds = ((phases.get("end")?.at ?? 0) - (phases.get("heavy")?.at ?? 0)) / 1000;
          const [a, b] = [threadsAt.get("heavy")!, threadsAt.get("end")!];
          const lines = [...b].map(([tid, t]) => [tid, (t.run - (a.get(tid)?.run ?? 0)) / seconds, (t.wait - (a.get(tid)?.wait ?? 0)) / seconds] as const).filter(([, run]) => run >= 1);
          process.stderr.write(`${name}: heavy phase, per thread (tid - pid: run / wait ms/s): ${lines.map(([tid, run, wait]) => `${tid === process.pid ? "main" : `+${tid - process.pid}`} ${run.toFixed(0)}/${wait.toFixed(0)}`).join(", ")}\n`);
          const sorted = [...cheapInServer].sort((x, y) => x - y);
          process.stderr.write(`${name}: cheap requests in the server during heavy reports (Fastify's onRequest to onResponse): ${sorted.length}, p50 ${sorted[sorted.length >> 1]?.toFixed(2)}, p99 ${sorted[Math.floor(sorted.length * 0.99)]?.toFixed(2)}, max ${sorted.at(-1)?.toFixed(2)} ms\n`);
          process.stderr.write(`${name}: server's event loop delay during heavy reports: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)}, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)}, max ${(loopDelay.max / 1e6).toFixed(1)} ms\n`);
        }
      });
      client.send(job);
      const figures = await answer;
      const waitPerSecond = (from: string, to: string) => {
        const [a, b] = [phases.get(from), phases.get(to)];
        return a === undefined || b === undefined ? undefined : ((b.wait - a.wait) / (b.at - a.at)) * 1000;
      };
      return { ingestRate, ...figures, waitIdle: waitPerSecond("idle", "heavy"), waitHeavy: waitPerSecond("heavy", "end") };
    } finally {
      await within(`${name}: closing the server`, 30_000, app.close());
      await within(`${name}: closing the exchange`, 30_000, exchange?.close() ?? Promise.resolve());
      await within(`${name}: closing the store`, 60_000, store.close());
      rmSync(spool, { recursive: true, force: true });
    }
  }

  const figures: Record<string, EngineFigures | string> = {};
  const dir = mkdtempSync(join(tmpdir(), "adxkit-bench-"));
  try {
    const db = duckdbFile ?? join(dir, "bench.duckdb");
    // Loaded as `adxkit ingest` does (every core), served as `adxkit serve` does (one core less, background threads niced).
    figures.DuckDB = await measure(
      "DuckDB",
      () => openStore({ db }),
      async (loaded) => {
        await loaded.close();
        return openStore({ db, duckdbThreads: serveThreads(), background });
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const unreachable = await fetch(`${new URL(clickhouseServer).origin}/ping`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => (r.ok ? undefined : `ping answered HTTP ${r.status}`),
    (error: Error) => `no server reachable (${error.message})`,
  );
  if (unreachable) figures.ClickHouse = `skipped: ${unreachable} at ${clickhouseServer}`;
  else {
    const database = `adxkit_bench_${randomBytes(6).toString("hex")}`;
    type House = ReportStore & { dropDatabase(): Promise<void>; server: { version: string } };
    const house = (await openStore({ store: "clickhouse", clickhouseUrl: `${clickhouseServer}/${database}` })) as House;
    try {
      const url = `${clickhouseServer}/${database}`;
      figures[`ClickHouse ${house.server.version}`] = await measure("ClickHouse", async () => house, () => openStore({ store: "clickhouse", clickhouseUrl: url }));
    } finally {
      await within("dropping the ClickHouse database", 60_000, house.dropDatabase()).catch(() => undefined);
      await within("closing the ClickHouse store", 30_000, house.close());
    }
  }
  const biddersExit = new Promise<void>((resolve) => bidders.once("exit", () => resolve()));
  bidders.disconnect();
  await within("the bidders' process exit", 15_000, biddersExit).catch((error: unknown) => {
    bidders.kill();
    throw error;
  });

  const engines = Object.keys(figures);
  const cell = (f: EngineFigures | string, value: (f: EngineFigures) => string) => (typeof f === "string" ? "—" : value(f));
  const ms = (n: number) => `${fmt(n)} ms`;
  const table: string[][] = [["figure", ...engines, "goal"]];
  const row = (name: string, goal: string, value: (f: EngineFigures) => string) => table.push([name, ...engines.map((e) => cell(figures[e], value)), goal]);
  row("ingest, facts/s (rollups maintained)", "≥ 900k (DuckDB), ≥ 1M (ClickHouse)", (f) => (Number.isNaN(f.ingestRate) ? "— (DUCKDB_FILE)" : fmt(f.ingestRate, 0)));
  row("month total through HTTP, median", "≤ 5 ms", (f) => ms(f.total));
  row("month by date × country through HTTP, median", "≤ 10 ms", (f) => ms(f.byCountry));
  row("month by date × country × app, 5 countries, median", "≤ 50 ms", (f) => `${ms(f.grouped)} (${fmt(f.groupedRows)} rows)`);
  row("cheap request p99, idle → during heavy reports", "≤ 20 ms", (f) => `${ms(f.cheapIdle)} → ${ms(f.cheapHeavy)}`);
  row("auction p99, idle → during heavy reports", "within tmax, ≤ 2× idle", (f) => `${ms(f.auctionIdle)} → ${ms(f.auctionHeavy)} (tmax ${f.tmax})`);
  row("heavy reports answered during the probes", "", (f) => `${f.heavyReports} in ${heavySeconds} s`);
  row("event loop's wait for a core, idle → heavy, ms/s", "", (f) => (f.waitIdle === undefined || f.waitHeavy === undefined ? "—" : `${fmt(f.waitIdle, 0)} → ${fmt(f.waitHeavy, 0)}`));
  printTable(`Reports through HTTP: ${fmt(plan.supplyRows)} supply + ${fmt(plan.demandRows)} demand facts over 31 days, medians of ${runs} runs`, table);
  for (const e of engines) if (typeof figures[e] === "string") process.stdout.write(`${e} ${figures[e]}; start one with test/store-clickhouse/start-clickhouse.sh start or set ADXKIT_CLICKHOUSE_URL\n`);
  const answers = engines.filter((e) => typeof figures[e] !== "string").map((e) => (figures[e] as EngineFigures).checks.join("; "));
  if (answers.length > 1) {
    const same = answers.every((a) => a === answers[0]);
    process.stdout.write(same ? "both engines answer the same rows and revenue\n" : `WARNING: the engines disagree:\n  ${answers.join("\n  ")}\n`);
    if (!same) process.exitCode = 1;
  }
}

/** What the client process is told: the server and the credentials. */
interface ClientJob {
  name: string;
  base: string;
  headers: Record<string, string>;
  auctionKey: string;
}

type ClientFigures = Omit<EngineFigures, "ingestRate">;

/** The client side, in its own process: the report medians, then the probes idle and during heavy reports. */
async function runClient({ name, base, headers, auctionKey }: ClientJob): Promise<ClientFigures> {
  const timeouts = { headersTimeout: requestTimeoutMs, bodyTimeout: requestTimeoutMs };
  // Timed to the answer's last byte: the client's own JSON.parse (25-45 ms for 31,000 rows here) is not the server's time.
  const post = async (body: unknown) => {
    const t = performance.now();
    const response = await request(`${base}/api/report/v1`, { method: "POST", headers, body: JSON.stringify(body), ...timeouts });
    const bytes = Buffer.from(await response.body.arrayBuffer());
    const ms = performance.now() - t;
    const parsed = JSON.parse(bytes.toString("utf8")) as { status: { code: number }; data: { total: number; data: Record<string, number>[] } };
    if (parsed.status.code !== 0) throw new Error(`report failed: ${JSON.stringify(parsed.status)}`);
    return { ms, rows: parsed.data.total, revenue: parsed.data.data.reduce((sum, row) => sum + (row.revenue ?? 0), 0) };
  };
  const month = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };
  const queries = {
    total: { ...month, metrics: ["revenue", "request", "response", "impression", "fill_rate"] },
    byCountry: { ...month, dimensions: ["date", "country"], metrics: ["revenue", "impression", "ecpm"], limit: 50_000 },
    grouped: { ...month, dimensions: ["date", "country", "app_bundle_id"], metrics: ["revenue", "impression", "ecpm"], country: ["USA", "GBR", "DEU", "JPN", "BRA"], limit: 50_000 },
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];
  const timed = async (body: unknown) => {
    const first = await post(body);
    for (let i = 1; i < warmup; i++) await post(body);
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push((await post(body)).ms);
    return { ms: median(times), rows: first.rows, check: `${first.rows} rows, revenue ${first.revenue.toFixed(4)}` };
  };
  process.stderr.write(`${name}: reports…\n`);
  const total = await timed(queries.total);
  const byCountry = await timed(queries.byCountry);
  const grouped = await timed(queries.grouped);

  // Probes: a cheap report request (good credentials, no start: -2 after the account's
  // lookup) every 5 ms, and an auction every 10 ms; each waits for its answer before the next.
  const auctionBody = readFileSync("bench/payloads/banner.json", "utf8");
  const tmax = JSON.parse(auctionBody).tmax ?? 200;
  const probe = async (seconds: number, send: () => Promise<unknown>, everyMs: number) => {
    const latencies: number[] = [];
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      const t = performance.now();
      await send();
      latencies.push(performance.now() - t);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    return latencies;
  };
  const cheap = async () => (await request(`${base}/api/report/v1`, { method: "POST", headers, body: "{}", ...timeouts })).body.text();
  const auction = async () => {
    const response = await request(`${base}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${auctionKey}` }, body: auctionBody, ...timeouts });
    const text = await response.body.text();
    // A refused auction (401, 400) is no auction: its time would measure nothing.
    if (response.statusCode !== 200 && response.statusCode !== 204) throw new Error(`auction answered HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
  };
  process.stderr.write(`${name}: probes, idle and during heavy reports…\n`);
  // Warmed first: the first auctions open the bidders' connections and compile the exchange's
  // path (hundreds of ms once), which would be the idle p99 and make "≤ 2× idle" mean nothing.
  for (let i = 0; i < 50; i++) await Promise.all([cheap(), auction()]);
  const phase = (name: PhaseMessage["phase"]) => process.send!({ phase: name } satisfies PhaseMessage);
  phase("idle");
  const [cheapIdle, auctionIdle] = await Promise.all([probe(2, cheap, 5), probe(2, auction, 10)]);
  const clientDelay = monitorEventLoopDelay({ resolution: 1 });
  phase("heavy");
  if (showThreads) clientDelay.enable();
  let heavyReports = 0;
  const until = performance.now() + heavySeconds * 1000;
  const heavyLoop = async () => {
    // Read into one reused buffer, not parsed: the client's CPU competes with the server's on a small machine (large-answers.ts).
    const connection = await largeAnswers(base);
    try {
      const body = JSON.stringify(queries.grouped);
      while (performance.now() < until) {
        const answer = await within("a heavy report", requestTimeoutMs, connection.post("/api/report/v1", headers, body));
        if (answer.status !== 200 || !answer.head.includes('"code":0,')) throw new Error(`heavy report failed: HTTP ${answer.status} ${answer.head}`);
        heavyReports++;
      }
    } finally {
      connection.close();
    }
  };
  const [cheapHeavy, auctionHeavy] = await Promise.all([probe(heavySeconds, cheap, 5), probe(heavySeconds, auction, 10), heavyLoop(), heavyLoop()]);
  phase("end");
  if (showThreads) process.stderr.write(`${name}: the client's event loop delay during heavy reports: p50 ${(clientDelay.percentile(50) / 1e6).toFixed(1)}, p99 ${(clientDelay.percentile(99) / 1e6).toFixed(1)}, max ${(clientDelay.max / 1e6).toFixed(1)} ms\n`);
  return {
    total: total.ms,
    byCountry: byCountry.ms,
    grouped: grouped.ms,
    groupedRows: grouped.rows,
    checks: [total.check, byCountry.check, grouped.check],
    cheapIdle: p99(cheapIdle),
    cheapHeavy: p99(cheapHeavy),
    auctionIdle: p99(auctionIdle as number[]),
    auctionHeavy: p99(auctionHeavy as number[]),
    tmax,
    heavyReports,
  };
}
