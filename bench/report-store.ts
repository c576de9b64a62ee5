/**
 * Report store bench: the store's report queries without HTTP (see USAGE).
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { openStore, seedPlan, type Metric, type ReportQuery } from "../service/store/index.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";

const USAGE = `Usage: npx tsx bench/report-store.ts [--rows N] [--days N] [--runs N] [--db PATH [--skip-load]]

The report store alone, without HTTP: seeds synthetic facts into a temporary DuckDB file, then
times the report queries the issue sets targets for (2-core machine: load > 500,000 facts/s; one
month grouped by date, country, app_bundle_id on 5 countries < 250 ms median; one-month total
< 50 ms median).
  --rows N            supply facts seeded (default 10000000)
  --days N            days they span (default 31)
  --runs N            timed runs of each query (default 20)
  --db PATH           the database file (default a temporary one, removed after)
  --skip-load         re-time the queries on a database --db seeded by an earlier run
  -h, --help          this text

Examples:
  npx tsx bench/report-store.ts --rows 1000000
  npx tsx bench/report-store.ts --db /tmp/store.duckdb --skip-load`;

const command = benchCommand(USAGE, { rows: { type: "string" }, days: { type: "string" }, runs: { type: "string" }, db: { type: "string" }, "skip-load": { type: "boolean" } });
const args = command.values;
const rows = command.integer("--rows", 10_000_000, 1);
const days = command.integer("--days", 31, 1);
const runs = command.integer("--runs", 20, 1);
if (args["skip-load"] && !args.db) command.fail("--skip-load needs --db PATH");
const dir = args.db ? undefined : await mkdtemp(join(tmpdir(), "adxkit-bench-"));
const db = args.db ?? join(dir!, "bench.duckdb");

const allMetrics: Metric[] = ["revenue", "request", "response", "impression", "fill_rate", "render_rate", "ecpm"];
const publishers = Array.from({ length: 10 }, (_, i) => `pub-${i + 1}`);
const month = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };
const base = { side: "supply", metrics: allMetrics, filters: {}, limit: 50_000, scope: { publisher_ids: publishers } } as const;
const queries: [string, ReportQuery][] = [
  ["month by date, country, app_bundle_id; 5 countries", { ...base, ...month, dimensions: ["date", "country", "app_bundle_id"], filters: { country: ["USA", "IND", "GBR", "DEU", "JPN"] } }],
  ["month total", { ...base, ...month, dimensions: [] }],
  ["month total, unaligned (05:30 to 17:10)", { ...base, start: "2026-10-01T05:30:00", end: "2026-10-31T17:10:00", dimensions: [] }],
  ["one week by date_hour, country (hourly facts)", { ...base, start: "2026-10-01T00:00:00", end: "2026-10-07T23:00:00", dimensions: ["date_hour", "country"] }],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

try {
  const table: string[][] = [["measure", "value", "target", "event loop max delay, ms"]];
  if (!args["skip-load"]) {
    const plan = seedPlan({ days, rows });
    process.stderr.write(`seeding ${fmt(plan.supplyRows)} supply + ${fmt(plan.demandRows)} demand facts, ${plan.start} to ${plan.end}, into ${db}\n`);
    const store = await openStore({ db });
    const t0 = performance.now();
    const loaded = await store.ingest({ seed: { days, rows } });
    const loadSeconds = (performance.now() - t0) / 1000;
    await store.close();
    table.push(["facts loaded (generate + ingest)", fmt(loaded), ""]);
    table.push(["load rate, facts/s", fmt(loaded / loadSeconds), "> 500,000"]);
  }
  const size = (await stat(db)).size + (await stat(`${db}.wal`).then((s) => s.size).catch(() => 0));
  table.push(["store size on disk, MiB", fmt(size / 2 ** 20), ""]);
  const store = await openStore({ db });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  for (const [name, query] of queries) {
    await store.report(query);
    const times: number[] = [];
    let result = { total: 0 };
    delay.enable();
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      result = await store.report(query);
      times.push(performance.now() - t);
    }
    delay.disable();
    const blocked = fmt(delay.max / 1e6);
    delay.reset();
    const target = name.startsWith("month by") ? "< 250" : name === "month total" ? "< 50" : "";
    table.push([`${name}: median ms (${fmt(result.total)} rows)`, fmt(median(times)), target, blocked]);
  }
  await store.close();
  printTable(`report store (DuckDB), ${runs} runs per query`, table);
} finally {
  if (dir) await rm(dir, { recursive: true, force: true });
}
