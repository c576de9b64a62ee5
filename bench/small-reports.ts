/**
 * Where a small report's time goes (issue 18: the month total ≤ 5 ms, the month by date ×
 * country ≤ 10 ms through HTTP), layer by layer on one DuckDB file loaded before: see USAGE.
 */
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import type { ReportQuery } from "../service/store/index.js";
import { loadCompiled } from "./compiled.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";
import { readdirSync, readFileSync } from "node:fs";
import { mainThreadCpuMicros } from "./thread-cpu.js";

/** CPU µs of this process's threads by name (Linux; 10 ms ticks), the main thread as "main". */
function cpuByThreadName(): Map<string, number> {
  const out = new Map<string, number>();
  for (const id of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${id}/stat`, "utf8");
      const name = Number(id) === process.pid ? "main" : `${stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))}#${Number(id) - process.pid}`;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10_000);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}
const threadsBefore = new Map<string, number>();
/** Per thread name, the CPU ms per request since `markThreads`. */
function threadsSince(n: number): string {
  const parts: string[] = [];
  for (const [name, us] of cpuByThreadName()) {
    const d = (us - (threadsBefore.get(name) ?? 0)) / n / 1000;
    if (d >= 0.01 && name !== "main") parts.push(`${name} ${d.toFixed(2)}`);
  }
  return parts.join(", ");
}
function markThreads(): void {
  threadsBefore.clear();
  for (const [name, us] of cpuByThreadName()) threadsBefore.set(name, us);
}

const USAGE = `Usage: DUCKDB_FILE=PATH [VAR=value …] npx tsx bench/small-reports.ts

Where a small report's time goes, layer by layer, on one DuckDB file loaded before (a copy of a
10 M-fact file: the run adds an account to it): the plan and its SQL in JS, the statement alone on a
pooled connection, the store's reportJson, the app without a socket (inject), and HTTP from a
client in another process. Per layer: the median wall time, and CPU per request of the whole
process and of its main thread (the client's not counted), from RUNS sequential requests after a
warm-up. CPU figures hold on a busy machine where wall times do not. Served as \`adxkit serve\`
does (DuckDB with one core less, the report route warmed before listening). Run \`npm run build\`
first (it loads dist/).

Environment:
  DUCKDB_FILE=PATH     the database to read (required)
  REPORTS=LIST         of total, byCountry, grouped (default total,byCountry; grouped is the
                       31,000-row month by date × country × app)
  RUNS=N               timed requests per layer (default 200)
  WARMUP=N             requests before the timed ones (default 20)
  HTTP_ONLY=1          time a fresh server's requests through HTTP alone (with WARMUP=1 RUNS=20:
                       bench/reports-http.ts's medians)
  CPU_PROFILE=DIR      write the main thread's CPU profile of each HTTP layer there
                       (<report>-<layer>.cpuprofile)
  WARM_UP=N            the server's warm-up requests before it listens (default serve's; 0: none)
  INGEST_EVERY_MS=N    during the HTTP layer, load one fact every N ms (default 0: none)

Examples:
  DUCKDB_FILE=/tmp/b10m-copy.duckdb npx tsx bench/small-reports.ts
  DUCKDB_FILE=/tmp/b10m-copy.duckdb REPORTS=grouped RUNS=40 WARMUP=10 npx tsx bench/small-reports.ts`;

// The bench's own child ("client") is forked with its role as the argument.
const command = benchCommand(USAGE, {}, process.argv[2] === "client" ? [] : process.argv.slice(2));
const runs = command.integer("RUNS", 200, 1);
/** Requests sent before the timed ones (through HTTP). */
const warmup = command.integer("WARMUP", 20);
const warmUpGiven = process.env.WARM_UP === undefined ? undefined : command.integer("WARM_UP", 0);
const ingestEveryMs = command.integer("INGEST_EVERY_MS", 0);
if (process.argv[2] !== "client" && !process.env.DUCKDB_FILE) command.fail("DUCKDB_FILE=<a copy of a loaded database> is required");
const month = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };
/** The two requests of bench/reports-http.ts. */
const bodies = {
  total: { ...month, metrics: ["revenue", "request", "response", "impression", "fill_rate"] },
  byCountry: { ...month, dimensions: ["date", "country"], metrics: ["revenue", "impression", "ecpm"], limit: 50_000 },
  grouped: { ...month, dimensions: ["date", "country", "app_bundle_id"], metrics: ["revenue", "impression", "ecpm"], country: ["USA", "GBR", "DEU", "JPN", "BRA"], limit: 50_000 },
};
type Name = keyof typeof bodies;
/** REPORTS=total,byCountry,grouped: which of them to time (default the two small ones). */
const chosen = command.list<Name>("REPORTS", ["total", "byCountry"], Object.keys(bodies) as Name[]);

if (process.argv[2] === "client") {
  process.once("message", async (job: { base: string; headers: Record<string, string>; name: Name; n: number }) => {
    const times: number[] = [];
    for (let i = 0; i < job.n; i++) {
      const t = performance.now();
      const response = await request(`${job.base}/api/report/v1`, { method: "POST", headers: job.headers, body: JSON.stringify(bodies[job.name]) });
      const text = await response.body.text();
      times.push(performance.now() - t);
      if (!text.includes('"code":0,')) throw new Error(`report failed: ${text.slice(0, 200)}`);
    }
    process.send!(times, () => process.exit(0));
  });
} else {
  await main();
}

/** Starts the main thread's CPU profiler when CPU_PROFILE is set; the returned function writes `<file>.cpuprofile`. */
async function profile(): Promise<(file: string) => Promise<void>> {
  if (!process.env.CPU_PROFILE) return async () => {};
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  return async (file) => {
    const { profile: taken } = await session.post("Profiler.stop");
    writeFileSync(`${process.env.CPU_PROFILE}/${file}.cpuprofile`, JSON.stringify(taken));
    session.disconnect();
  };
}

interface Layer {
  wall: number[];
  cpu: number;
  main: number;
  threads: string;
}

/** Runs `once` RUNS times after 20 warm-ups: wall times, and CPU µs per run of the process and its main thread. */
async function layer(once: () => Promise<unknown>, file: string): Promise<Layer> {
  for (let i = 0; i < 20; i++) await once();
  const stop = await profile();
  const wall: number[] = [];
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMicros();
  markThreads();
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await once();
    wall.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpu0);
  await stop(file);
  return { wall, cpu: (cpu.user + cpu.system) / runs, main: (mainThreadCpuMicros() - main0) / runs, threads: threadsSince(runs) };
}

async function main(): Promise<void> {
  const file = process.env.DUCKDB_FILE!;
  const { openStore } = await loadCompiled<typeof import("../service/store/index.js")>("service/store/index.js");
  const { serveBackground, serveThreads } = await loadCompiled<typeof import("../service/store/duckdb/connection.js")>("service/store/duckdb/connection.js");
  const { buildApp } = await loadCompiled<typeof import("../service/app.js")>("service/app.js");
  const { planReport } = await loadCompiled<typeof import("../service/store/plan.js")>("service/store/plan.js");
  const { renderReport } = await loadCompiled<typeof import("../service/store/duckdb/report-sql.js")>("service/store/duckdb/report-sql.js");
  const { runPrepared, runPreparedResult } = await loadCompiled<typeof import("../service/store/duckdb/statements.js")>("service/store/duckdb/statements.js");
  const { reportQuery } = await loadCompiled<typeof import("../service/reports/handlers.js")>("service/reports/handlers.js");
  const { serveDefault } = await loadCompiled<typeof import("../service/serve-defaults.js")>("service/serve-defaults.js");
  const warmUpRequests = warmUpGiven ?? serveDefault("warmUpRequests");

  // Threads as `adxkit serve` has them: one core less for DuckDB, the background ones niced.
  const store = await openStore({ db: file, duckdbThreads: serveThreads(), background: serveBackground() });
  const account = await store.createAccount({ side: "supply", publisher_ids: Array.from({ length: 50 }, (_, i) => `pub-${i + 1}`) });
  const fullAccount = (await store.verifyCredentials(account.userid, account.authorization))!;
  const app = await buildApp({ store, warmUpRequests });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const headers = { "content-type": "application/json", "x-userid": account.userid, "x-authorization": account.authorization };
  // The store's internals, for the statement alone: its pool and dictionary codes.
  const internals = store as unknown as { pool: { use<T>(work: (c: never) => Promise<T>): Promise<T> }; codes: { load(c: never, wanted: Map<string, string[]>): Promise<void>; codesOf(d: string, v: readonly string[]): readonly number[] } };

  const table: string[][] = [["report", "layer", "wall median", "CPU / request", "main thread / request", "other threads / request (ms)"]];
  const ms = (xs: number[]) => `${[...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)].toFixed(2)} ms`;
  const us = (x: number) => `${(x / 1000).toFixed(2)} ms`;
  try {
    for (const name of chosen) {
      const query: ReportQuery = reportQuery("supply", fullAccount, bodies[name] as never);
      const plan = planReport(query);
      const render = () => renderReport(plan, (d, v) => internals.codes.codesOf(d, v));
      const wanted = new Map<string, string[]>([[plan.scope.dimension, [...plan.scope.values]]]);
      for (const filter of plan.filters) if (filter.type === "string") wanted.set(filter.dimension, [...(filter.values as string[])]);
      await internals.pool.use(async (c) => internals.codes.load(c, wanted));
      const sql = render();
      const statement = async () =>
        internals.pool.use(async (c) => {
          const r = render();
          if (r.kind === "row") return runPrepared(c, r.sql, r.values, r.types);
          if (r.columns !== undefined) return (await runPreparedResult(c, r.columns.sql, r.values.slice(0, -1), r.types.slice(0, -1))).rowCount;
          return runPrepared(c, r.select, r.values, r.types);
        });
      const layers: [string, () => Promise<unknown>][] = [
        ["plan + SQL (JS)", async () => renderReport(planReport(query), (d, v) => internals.codes.codesOf(d, v))],
        [`statement alone (${sql.kind === "row" ? "sums" : "grouped columns"})`, statement],
        ["store.reportJson", async () => (await store.reportJson(query)).release?.()],
        ["app.inject", () => app.inject({ method: "POST", url: "/api/report/v1", headers, payload: bodies[name] })],
      ];
      // HTTP_ONLY=1: a fresh server's first requests, as bench/reports-http.ts times them (WARMUP before RUNS).
      for (const [i, [what, once]] of process.env.HTTP_ONLY ? [] : layers.entries()) {
        const l = await layer(once, `${name}-${i}`);
        table.push([name, what, ms(l.wall), us(l.cpu), us(l.main), l.threads]);
      }
      // HTTP: the client in its own process; the server's CPU over its requests.
      const client = fork(fileURLToPath(import.meta.url), ["client"], { execArgv: process.execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
      const answer = new Promise<number[]>((resolve, reject) => {
        client.once("message", (m) => resolve(m as number[]));
        client.once("exit", (code) => reject(new Error(`the client exited (${code}) before answering`)));
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stop = await profile();
      const cpu0 = process.cpuUsage();
      const main0 = mainThreadCpuMicros();
      markThreads();
      let loads = 0;
      const loading =
        ingestEveryMs > 0
          ? setInterval(() => {
              const fact = { side: "supply" as const, date_hour: "2026-10-15T12:00:00", publisher_id: "pub-1", app_bundle_id: "com.bench.steady", placement_id: "pl-steady", ad_format: 1, platform: 2, country: "USA", request: 1, response: 1, impression: 1, revenue: 0.001 };
              void store.ingest([fact]).then(() => loads++);
            }, ingestEveryMs)
          : undefined;
      client.send({ base, headers, name, n: runs + warmup });
      const times = (await answer).slice(warmup);
      clearInterval(loading);
      if (ingestEveryMs > 0) process.stderr.write(`${name}: ${loads} loads of one fact during the HTTP layer\n`);
      if (process.env.HTTP_ONLY) process.stderr.write(`${name}: ${times.map((t) => t.toFixed(1)).join(" ")}\n`);
      const cpu = process.cpuUsage(cpu0);
      await stop(`${name}-http`);
      table.push([name, "HTTP (client in another process)", ms(times), us((cpu.user + cpu.system) / (runs + warmup)), us((mainThreadCpuMicros() - main0) / (runs + warmup)), threadsSince(runs + warmup)]);
    }
  } finally {
    await app.close();
    await store.close();
  }
  printTable(`Small reports, layer by layer: ${runs} runs each (${new Date().toISOString().slice(0, 16)} UTC)`, table);
}
