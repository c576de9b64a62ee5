/**
 * What counting billed impressions once across exchange nodes costs a ClickHouse report
 * (docs/clickhouse.md): see USAGE.
 */
import { randomBytes } from "node:crypto";
import type { ReportQuery, ReportStore } from "../service/store/index.js";
import { loadCompiled } from "./compiled.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";

const USAGE = `Usage: [VAR=value …] npx tsx bench/clickhouse-billed.ts

What counting billed impressions once across exchange nodes costs a ClickHouse report: billed
impressions are rows per token read with FINAL over the report's whole range, beside the rollups.
One publisher's month of BILLED impressions (half of them written a second time, as a second node
would) is generated server-side; three supply reports over the month, medians of RUNS, with none,
with the billed rows read with FINAL, and after the month is settled into per-day sums, read
instead. Skipped without a server. Run \`npm run build\` first (it loads dist/).

Environment:
  BILLED=N             billed impressions generated (default 1000000)
  RUNS=N               reports of each kind (default 9)
  ADXKIT_CLICKHOUSE_URL=URL  the ClickHouse server (default http://127.0.0.1:18123)

Example:
  BILLED=100000 RUNS=5 npx tsx bench/clickhouse-billed.ts`;

const cli = benchCommand(USAGE);
const billed = cli.integer("BILLED", 1_000_000, 1);
const runs = cli.integer("RUNS", 9, 1);
const server = (process.env.ADXKIT_CLICKHOUSE_URL ?? "http://127.0.0.1:18123").replace(/\/+$/, "");

/** A statement through ClickHouse's HTTP interface. */
async function command(sql: string): Promise<void> {
  const response = await fetch(`${server}/`, { method: "POST", body: sql, signal: AbortSignal.timeout(600_000) });
  if (!response.ok) throw new Error(`${sql.slice(0, 60)}…: ${await response.text()}`);
}

const month: Omit<ReportQuery, "metrics" | "dimensions"> = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59", filters: {}, limit: 50_000, side: "supply", scope: { publisher_ids: ["pub-1"] } };
const queries: [string, ReportQuery][] = [
  ["month total", { ...month, metrics: ["impression", "revenue"], dimensions: [] }],
  ["month by date", { ...month, metrics: ["impression", "revenue"], dimensions: ["date"] }],
  ["month by placement (200 rows)", { ...month, metrics: ["impression", "revenue"], dimensions: ["placement_id"] }],
];

/** The median of each query, one after the other. */
async function medians(store: ReportStore): Promise<number[]> {
  const out: number[] = [];
  for (const [, query] of queries) out.push(await median(store, query));
  return out;
}

async function median(store: ReportStore, query: ReportQuery): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await store.report(query);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

try {
  await fetch(`${server}/ping`, { signal: AbortSignal.timeout(2000) });
} catch {
  process.stdout.write(`no ClickHouse server at ${server}: bench skipped\n`);
  process.exit(0);
}
const { openStore } = await loadCompiled<typeof import("../service/store/index.js")>("service/store/index.js");
const database = `adxkit_bench_${randomBytes(6).toString("hex")}`;
const store = await openStore({ store: "clickhouse", clickhouseUrl: `${server}/${database}` });
try {
  const empty = await medians(store);
  // Spread over the month, 50 apps × 200 placements; token ids unique; CPM 2 each.
  const rows = (limit: number) =>
    `INSERT INTO ${database}.supply_billed SELECT toStartOfHour(toDateTime('2026-10-01 00:00:00', 'UTC') + intDiv(number * 2678400, ${billed})), 'pub-1', concat('com.app.', toString(number % 50)), concat('pl-', toString(number % 200)), 1, 2, 'USA', 0, 0, 1, 0.002, concat('tok-', toString(number)) FROM system.numbers LIMIT ${limit}`;
  await command(rows(billed));
  await command(rows(Math.floor(billed / 2)));
  const [check] = (await store.report(queries[0][1])).rows;
  if (check.impression !== billed) throw new Error(`counted ${check.impression} impressions, expected ${billed}`);
  const full = await medians(store);
  // The month is long past: one settling run folds all of it into per-day sums.
  const settling = performance.now();
  const run = await store.settleBilled!();
  const settleMs = performance.now() - settling;
  if (!run.supply.includes("2026-10-31")) throw new Error(`the month was not settled: ${JSON.stringify(run.supply)}`);
  const [after] = (await store.report(queries[0][1])).rows;
  if (after.impression !== billed || after.revenue !== check.revenue) throw new Error(`settled: ${JSON.stringify(after)}, before: ${JSON.stringify(check)}`);
  const settled = await medians(store);
  printTable(`ClickHouse supply reports over one month, ${billed.toLocaleString("en")} billed impressions (+${Math.floor(billed / 2).toLocaleString("en")} written twice) vs none (median ms of ${runs}); settling the month took ${settleMs.toFixed(0)} ms`, [
    ["report", "no billed rows", "billed rows (FINAL)", "settled"],
    ...queries.map(([name], i) => [name, empty[i].toFixed(1), full[i].toFixed(1), settled[i].toFixed(1)]),
  ]);
} finally {
  await command(`DROP DATABASE IF EXISTS ${database}`);
  await store.close();
}
