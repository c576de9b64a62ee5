/**
 * DuckDB vs ClickHouse report store, side by side: the same seeded facts (generateSeedFacts,
 * 31 days, seed 7) into a temporary DuckDB file and a fresh ClickHouse database, then the same
 * report queries, median of RUNS runs each (after one warm-up run), with the ingest rates.
 * Run: `ROWS=1000000 npx tsx bench/report-store-compare.ts` (ROWS default 2,000,000, RUNS 10).
 * ClickHouse: ADXKIT_CLICKHOUSE_URL (default http://127.0.0.1:18123, as the tests; start one with
 * test/store-clickhouse/start-clickhouse.sh start); its columns are skipped when no server answers.
 * Loads the compiled code in dist/ (npm run build first).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Metric, ReportQuery, ReportStore } from "../service/store/index.js";
import { loadCompiled } from "./compiled.js";
import { printTable } from "./table.js";

const rows = Number(process.env.ROWS ?? 2_000_000);
const runs = Number(process.env.RUNS ?? 10);
const days = 31;
const seed = 7;
const clickhouseServer = (process.env.ADXKIT_CLICKHOUSE_URL ?? "http://127.0.0.1:18123").replace(/\/+$/, "");
const { openStore, generateSeedFacts, seedPlan } = await loadCompiled<typeof import("../service/store/index.js")>("service/store/index.js");

const allMetrics: Metric[] = ["revenue", "request", "response", "impression", "fill_rate", "render_rate", "ecpm"];
const publishers = Array.from({ length: 10 }, (_, i) => `pub-${i + 1}`);
const month = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };
const base = { side: "supply", metrics: allMetrics, filters: {}, limit: 50_000, scope: { publisher_ids: publishers } } as const;
const queries: [string, ReportQuery][] = [
  ["month by date × country × app_bundle_id, 5 countries", { ...base, ...month, dimensions: ["date", "country", "app_bundle_id"], filters: { country: ["USA", "IND", "GBR", "DEU", "JPN"] } }],
  ["month total", { ...base, ...month, dimensions: [] }],
  ["one week by date_hour × country", { ...base, start: "2026-10-01T00:00:00", end: "2026-10-07T23:59:59", dimensions: ["date_hour", "country"] }],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });

interface EngineResult {
  loaded: number;
  loadSeconds: number;
  /** Per query: median ms and the row count of the answer. */
  queries: { ms: number; total: number; checksum: number }[];
}

/** Ingests the seeded facts, then times every query (one warm-up, then `runs` runs). */
async function measure(name: string, store: ReportStore): Promise<EngineResult> {
  process.stderr.write(`${name}: ingesting…\n`);
  const t0 = performance.now();
  const loaded = await store.ingest(generateSeedFacts({ days, rows, seed }));
  const loadSeconds = (performance.now() - t0) / 1000;
  process.stderr.write(`${name}: ${fmt(loaded)} facts in ${fmt(loadSeconds)} s; querying…\n`);
  const results: EngineResult["queries"] = [];
  for (const [, query] of queries) {
    const first = await store.report(query);
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await store.report(query);
      times.push(performance.now() - t);
    }
    // Total revenue of the answer: the two engines must agree on it, not only on the row count.
    const checksum = first.rows.reduce((sum, row) => sum + Number(row.revenue ?? 0), 0);
    results.push({ ms: median(times), total: first.total, checksum });
  }
  return { loaded, loadSeconds, queries: results };
}

/** Why ClickHouse cannot be measured, or undefined. */
async function clickhouseUnavailable(): Promise<string | undefined> {
  try {
    await import("@clickhouse/client");
  } catch {
    return "@clickhouse/client is not installed";
  }
  try {
    const response = await fetch(`${new URL(clickhouseServer).origin}/ping`, { signal: AbortSignal.timeout(2000) });
    return response.ok ? undefined : `ping answered HTTP ${response.status}`;
  } catch (error) {
    return `no server reachable (${(error as Error).message})`;
  }
}

const plan = seedPlan({ days, rows });
process.stderr.write(`seed: ${fmt(plan.supplyRows)} supply + ${fmt(plan.demandRows)} demand facts, ${plan.start} to ${plan.end}\n`);

const dir = mkdtempSync(join(tmpdir(), "adxkit-compare-"));
let duck: EngineResult;
let house: EngineResult | undefined;
let clickhouseNote: string | undefined;
try {
  const duckStore = await openStore({ db: join(dir, "compare.duckdb") });
  try {
    duck = await measure("DuckDB", duckStore);
  } finally {
    await duckStore.close();
  }

  clickhouseNote = await clickhouseUnavailable();
  if (clickhouseNote === undefined) {
    const database = `adxkit_bench_${randomBytes(6).toString("hex")}`;
    const chStore = (await openStore({ store: "clickhouse", clickhouseUrl: `${clickhouseServer}/${database}` })) as ReportStore & { dropDatabase?: () => Promise<void> };
    try {
      house = await measure(`ClickHouse (${clickhouseServer}/${database})`, chStore);
    } finally {
      await chStore.dropDatabase?.().catch((error: Error) => process.stderr.write(`could not drop ${database}: ${error.message}\n`));
      await chStore.close();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const skipped = "skipped";
const table: string[][] = [["measure", "DuckDB", "ClickHouse", "rows (DuckDB / ClickHouse)"]];
table.push(["facts loaded (generate + ingest)", fmt(duck.loaded), house ? fmt(house.loaded) : skipped, ""]);
table.push(["ingest time, s", fmt(duck.loadSeconds), house ? fmt(house.loadSeconds) : skipped, ""]);
table.push(["ingest rate, facts/s", fmt(duck.loaded / duck.loadSeconds), house ? fmt(house.loaded / house.loadSeconds) : skipped, ""]);
queries.forEach(([name], i) => {
  const d = duck.queries[i];
  const c = house?.queries[i];
  table.push([`${name}: median ms`, fmt(d.ms), c ? fmt(c.ms) : skipped, c ? `${fmt(d.total)} / ${fmt(c.total)}` : fmt(d.total)]);
});
printTable(`report store, DuckDB vs ClickHouse: ${fmt(plan.supplyRows)} supply + ${fmt(plan.demandRows)} demand seeded facts over ${days} days, median of ${runs} runs per query`, table);
if (!house) process.stdout.write(`ClickHouse columns skipped: ${clickhouseNote} at ${clickhouseServer}; start one with test/store-clickhouse/start-clickhouse.sh start or set ADXKIT_CLICKHOUSE_URL\n`);
if (house) {
  const mismatches = queries.filter((_, i) => duck.queries[i].total !== house!.queries[i].total || Math.abs(duck.queries[i].checksum - house!.queries[i].checksum) > 1e-6 * Math.max(1, Math.abs(duck.queries[i].checksum)));
  if (mismatches.length > 0) {
    process.stdout.write(`WARNING: the engines disagree on ${mismatches.map(([name]) => name).join("; ")}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write("both engines return the same row counts and revenue totals\n");
  }
}
