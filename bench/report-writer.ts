/**
 * Large reports' rows written on the report writer's thread against on the event loop (issue 18;
 * service/store/duckdb/report-writer-thread.ts): see USAGE.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import type { Metric, ReportQuery } from "../service/store/index.js";
import type { DuckDBReportStore as Store } from "../service/store/duckdb/store.js";
import { loadCompiled } from "./compiled.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";

const USAGE = `Usage: DUCKDB_FILE=PATH [VAR=value …] npx tsx bench/report-writer.ts

Large reports' rows written on the report writer's thread against on the event loop: two stores
on two copies of one database file (DUCKDB_FILE, e.g. one bench/reports-http.ts loaded), one writing
every report with dimensions on the thread, the other none, alternating. Per report size: the
median time to the answer's bytes and the main thread's CPU per report; then, per store, the event
loop's delay (p99, max) while two loops of the 31,000-row report run for HEAVY_S seconds. The main
thread's CPU is Linux's own count for that thread (schedstat), so it holds on a busy machine where
wall times do not. Run \`npm run build\` first (it loads dist/).

Environment:
  DUCKDB_FILE=PATH     the database to copy and read (required)
  RUNS=N               reports of each size per store (default 15)
  HEAVY_S=N            seconds of heavy reports per store (default 4)

Example:
  DUCKDB_FILE=/tmp/copy.duckdb npx tsx bench/report-writer.ts`;

const command = benchCommand(USAGE);
const file = process.env.DUCKDB_FILE ?? command.fail("DUCKDB_FILE=<a database bench/reports-http.ts loaded> is required");
const runs = command.integer("RUNS", 15, 1);
const heavySeconds = command.number("HEAVY_S", 4, 0.1);

const { DuckDBReportStore } = await loadCompiled<typeof import("../service/store/duckdb/store.js")>("service/store/duckdb/store.js");
const { serveThreads } = await loadCompiled<typeof import("../service/store/duckdb/connection.js")>("service/store/duckdb/connection.js");

/** The main thread's CPU so far, ns (Linux's schedstat; the event loop's busy time elsewhere). */
function mainCpuNs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    return performance.eventLoopUtilization().active * 1e6;
  }
}

const month = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };
const metrics: Metric[] = ["revenue", "impression", "ecpm"];
const base = { side: "supply" as const, metrics, filters: {}, limit: 50_000, scope: { publisher_ids: Array.from({ length: 50 }, (_, i) => `pub-${i + 1}`) } };
const sizes: [string, ReportQuery][] = [
  ["month by date × country", { ...base, ...month, dimensions: ["date", "country"] }],
  ["month by date × country × format", { ...base, ...month, dimensions: ["date", "country", "ad_format"] }],
  ["month by date × country × platform × format", { ...base, ...month, dimensions: ["date", "country", "platform", "ad_format"] }],
  ["month by date × app, 1 country", { ...base, ...month, dimensions: ["date", "app_bundle_id"], filters: { country: ["USA"] } }],
  ["month by date × country × app, 2 countries", { ...base, ...month, dimensions: ["date", "country", "app_bundle_id"], filters: { country: ["USA", "GBR"] } }],
  ["month by date × country × app, 5 countries", { ...base, ...month, dimensions: ["date", "country", "app_bundle_id"], filters: { country: ["USA", "GBR", "DEU", "JPN", "BRA"] } }],
];
const heavy = sizes[sizes.length - 1][1];

const dir = mkdtempSync(join(tmpdir(), "adxkit-report-writer-"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function once(store: Store, query: ReportQuery): Promise<{ wall: number; cpu: number; rows: number }> {
  const cpu = mainCpuNs();
  const start = performance.now();
  const answer = await store.reportJson(query);
  const wall = performance.now() - start;
  const used = (mainCpuNs() - cpu) / 1e6;
  answer.release?.();
  return { wall, cpu: used, rows: answer.total };
}

/** The event loop's delay (p99, max, ms) while two loops of the heavy report run, and how many ran. */
async function underHeavy(store: Store): Promise<{ p99: number; max: number; reports: number; cpu: number }> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const until = performance.now() + heavySeconds * 1000;
  let reports = 0;
  const cpu = mainCpuNs();
  delay.enable();
  const loop = async () => {
    while (performance.now() < until) {
      (await store.reportJson(heavy)).release?.();
      reports++;
    }
  };
  await Promise.all([loop(), loop()]);
  delay.disable();
  return { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6, reports, cpu: (mainCpuNs() - cpu) / 1e6 / reports };
}

const stores: [string, Store][] = [];
try {
  for (const [name, writerFromRows] of [["event loop", Number.POSITIVE_INFINITY], ["thread", 1]] as const) {
    const copy = join(dir, `${stores.length}.duckdb`);
    copyFileSync(file, copy);
    stores.push([name, await DuckDBReportStore.open(copy, { threads: serveThreads(), writerFromRows })]);
  }
  // Warm both: names cached, the thread started, statements planned once.
  for (const [, store] of stores) for (const [, query] of sizes) for (let i = 0; i < 3; i++) (await store.reportJson(query)).release?.();
  const results = new Map<string, { wall: number[]; cpu: number[]; rows: number }>();
  for (let run = 0; run < runs; run++) {
    for (const [label, query] of sizes) {
      for (const [name, store] of run % 2 === 0 ? stores : [...stores].reverse()) {
        const { wall, cpu, rows } = await once(store, query);
        const key = `${label}\t${name}`;
        const r = results.get(key) ?? { wall: [], cpu: [], rows };
        r.wall.push(wall);
        r.cpu.push(cpu);
        results.set(key, r);
      }
    }
  }
  const table: string[][] = [];
  for (const [label] of sizes) {
    const loop = results.get(`${label}\tevent loop`)!;
    const thread = results.get(`${label}\tthread`)!;
    table.push([`${label} (${loop.rows.toLocaleString("en")} rows)`, `${ms(median(loop.wall))} / ${ms(median(loop.cpu))}`, `${ms(median(thread.wall))} / ${ms(median(thread.cpu))}`]);
  }
  const heavyRuns: string[][] = [];
  for (const [name, store] of [...stores, ...stores]) {
    const h = await underHeavy(store);
    heavyRuns.push([name, `${ms(h.p99)} / ${ms(h.max)}`, String(h.reports), ms(h.cpu)]);
  }
  printTable(`Reports written on the event loop or the writer's thread, DuckDB ${serveThreads()} thread(s), medians of ${runs}, alternating`, [["report", "event loop: to the bytes / main CPU", "thread: to the bytes / main CPU"], ...table]);
  printTable(`Two loops of the 31,000-row report for ${heavySeconds} s, the event loop's delay (1 ms resolution), alternating`, [["writer", "loop delay p99 / max", "reports", "main CPU per report"], ...heavyRuns]);
} finally {
  for (const [, store] of stores) await store.close();
  rmSync(dir, { recursive: true, force: true });
}
