/**
 * Ingest alone, both engines (the "ingest, facts/s" row of bench/reports-http.ts without the
 * report probes after it): see USAGE.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { ReportStore } from "../service/store/index.js";
import { loadCompiled } from "./compiled.js";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";
import { threadCpuMicros } from "./thread-cpu.js";

const USAGE = `Usage: [VAR=value …] npx tsx bench/ingest.ts

Ingest alone, both engines (the "ingest, facts/s" row of bench/reports-http.ts without the report
probes after it): ROWS seeded supply facts (and a tenth as many demand facts) over one month loaded
into a fresh store, rollups maintained, as \`adxkit ingest\` runs. Also prints what generating the
facts costs on its own, the floor under both figures. ClickHouse where a server answers. Run
\`npm run build\` first (it loads dist/).

Environment:
  ROWS=N               supply facts seeded (default 10000000)
  RUNS=N               loads per engine; the best is printed, to see through a busy machine (default 1)
  ENGINES=LIST         of duckdb, clickhouse (default both)
  IN_THREAD=1          generate the facts on the main thread instead of the store's worker thread
  ADXKIT_CLICKHOUSE_URL=URL  the ClickHouse server (default http://127.0.0.1:18123)

Examples:
  ROWS=1000000 npx tsx bench/ingest.ts
  ENGINES=duckdb RUNS=3 npx tsx bench/ingest.ts`;

const command = benchCommand(USAGE);
const rows = command.integer("ROWS", 10_000_000, 1);
const runs = command.integer("RUNS", 1, 1);
const engines = command.list("ENGINES", ["duckdb", "clickhouse"], ["duckdb", "clickhouse"]);
const clickhouseServer = (process.env.ADXKIT_CLICKHOUSE_URL ?? "http://127.0.0.1:18123").replace(/\/+$/, "");

const { openStore, generateSeedFacts, seedPlan } = await loadCompiled<typeof import("../service/store/index.js")>("service/store/index.js");
const plan = seedPlan({ days: 31, rows });
const total = plan.supplyRows + plan.demandRows;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits });
const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");
const seedOptions = { days: 31, rows, seed: 7 };
const facts = () => generateSeedFacts(seedOptions);
// What `adxkit seed` and the demo load: the store reads the seed itself (DuckDB on a worker thread).
const source = () => (process.env.IN_THREAD ? facts() : { seed: seedOptions });

/**
 * Where a load's CPU went, in seconds: the main thread; the threads alive before and after it
 * (DuckDB's, V8's and libuv's); the rest, threads that came and went (a load's worker thread).
 */
function cpuShares(threadsBefore: Map<number, number>, processBefore: NodeJS.CpuUsage): string {
  const used = process.cpuUsage(processBefore);
  const total = (used.user + used.system) / 1e6;
  let main = 0;
  let others = 0;
  for (const [id, micros] of threadCpuMicros()) {
    const spent = (micros - (threadsBefore.get(id) ?? 0)) / 1e6;
    if (id === process.pid) main = spent;
    else if (threadsBefore.has(id)) others += spent;
  }
  const s = (n: number) => `${n.toFixed(1)} s`;
  return `${s(total)}: main thread ${s(main)}, DuckDB's and other lasting threads ${s(others)}, threads of the load ${s(Math.max(0, total - main - others))}`;
}

/** Facts per second of the best of RUNS loads, each into a store `open` gives fresh. */
async function best(name: string, open: () => Promise<{ store: ReportStore; dispose: () => Promise<void> }>): Promise<number> {
  let rate = 0;
  for (let run = 0; run < runs; run++) {
    const { store, dispose } = await open();
    try {
      const threadsBefore = threadCpuMicros();
      const processBefore = process.cpuUsage();
      const t0 = performance.now();
      const loaded = await store.ingest(source());
      const r = loaded / ((performance.now() - t0) / 1000);
      process.stderr.write(`${name}: ${fmt(loaded)} facts at ${fmt(r)}/s (load average ${load()}); CPU ${cpuShares(threadsBefore, processBefore)}\n`);
      rate = Math.max(rate, r);
    } finally {
      await dispose();
      await store.close();
    }
  }
  return rate;
}

const table: string[][] = [["measure", "facts/s", "goal"]];
const t0 = performance.now();
let generated = 0;
for (const _ of facts()) generated++;
table.push(["generating the seeded facts alone", fmt(generated / ((performance.now() - t0) / 1000)), ""]);

if (engines.includes("duckdb")) {
  const rate = await best("DuckDB", async () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-bench-ingest-"));
    const store = await openStore({ db: join(dir, "bench.duckdb") });
    // Closed first: DuckDB holds the file until then.
    return { store, dispose: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
  });
  table.push(["DuckDB ingest (rollups maintained)", fmt(rate), "≥ 900k"]);
}
if (engines.includes("clickhouse")) {
  const reachable = await fetch(`${new URL(clickhouseServer).origin}/ping`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => r.ok,
    () => false,
  );
  if (!reachable) table.push([`ClickHouse: no server at ${clickhouseServer}`, "—", "≥ 1 M"]);
  else {
    let version = "";
    const rate = await best("ClickHouse", async () => {
      type House = ReportStore & { dropDatabase(): Promise<void>; server: { version: string } };
      const store = (await openStore({ store: "clickhouse", clickhouseUrl: `${clickhouseServer}/adxkit_bench_${randomBytes(6).toString("hex")}` })) as House;
      version = store.server.version;
      return { store, dispose: () => store.dropDatabase().catch(() => undefined) };
    });
    table.push([`ClickHouse ${version} ingest (rollups maintained)`, fmt(rate), "≥ 1 M"]);
  }
}
printTable(`Ingest: ${fmt(plan.supplyRows)} supply + ${fmt(plan.demandRows)} demand facts (${fmt(total)}) over 31 days, best of ${runs}; load average at the end ${load()}`, table);
