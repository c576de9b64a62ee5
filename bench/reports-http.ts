/**
 * Report bench through HTTP: 10 million hourly supply facts over 31 days (the seed
 * generator), then a one-month query grouped by date, country and app_bundle_id filtered on 5
 * countries, and a one-month total; medians over repeated runs. Also the p99 of a cheap
 * request while a heavy report runs (the event loop must stay free). Loopback only.
 * ROWS=1000000 npx tsx bench/reports-http.ts for a quicker run.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { loadCompiled } from "./compiled.js";
import { printTable } from "./table.js";

const rows = Number(process.env.ROWS ?? 10_000_000);
const { openStore, generateSeedFacts } = await loadCompiled<typeof import("../service/store/index.js")>("service/store/index.js");
const { buildApp } = await loadCompiled<typeof import("../service/app.js")>("service/app.js");

const dir = mkdtempSync(join(tmpdir(), "adxkit-bench-"));
const db = join(dir, "bench.duckdb");
const store = await openStore({ db });
try {
  const started = performance.now();
  let lastReport = started;
  async function* progress() {
    let n = 0;
    for (const fact of generateSeedFacts({ days: 31, rows, seed: 7 })) {
      yield fact;
      if (++n % 1_000_000 === 0 && performance.now() - lastReport > 2000) {
        lastReport = performance.now();
        process.stderr.write(`  seeded ${n.toLocaleString()} facts\n`);
      }
    }
  }
  const ingested = await store.ingest(progress());
  const seedSeconds = (performance.now() - started) / 1000;
  const publishers = Array.from({ length: 50 }, (_, i) => `pub-${i + 1}`);
  const account = await store.createAccount({ side: "supply", publisher_ids: publishers });
  const app = await buildApp({ store });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${port}/api/report/v1`;
  const headers = { "content-type": "application/json", "x-userid": account.userid, "x-authorization": account.authorization };
  const post = async (body: unknown) => {
    const t = performance.now();
    const response = await request(url, { method: "POST", headers, body: JSON.stringify(body) });
    const parsed = (await response.body.json()) as any;
    if (parsed.status.code !== 0) throw new Error(`report failed: ${JSON.stringify(parsed.status)}`);
    return { ms: performance.now() - t, rows: parsed.data.total };
  };
  const month = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };
  const grouped = { ...month, dimensions: ["date", "country", "app_bundle_id"], metrics: ["revenue", "impression", "ecpm"], country: ["USA", "GBR", "DEU", "JPN", "BRA"], limit: 50000 };
  const total = { ...month, metrics: ["revenue", "request", "response", "impression", "fill_rate"] };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const timed = async (body: unknown, runs: number) => {
    await post(body);
    const times: number[] = [];
    let count = 0;
    for (let i = 0; i < runs; i++) {
      const r = await post(body);
      times.push(r.ms);
      count = r.rows;
    }
    return { median: median(times), rows: count };
  };
  const g = await timed(grouped, 20);
  const t = await timed(total, 20);

  // A cheap request (a small auth failure answer) sampled every 5 ms while heavy reports run.
  const cheap: number[] = [];
  let heavyRunning = true;
  const heavy = (async () => {
    for (let i = 0; i < 5; i++) await post(grouped);
    heavyRunning = false;
  })();
  while (heavyRunning) {
    const s = performance.now();
    const response = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    await response.body.text();
    cheap.push(performance.now() - s);
    await new Promise((r) => setTimeout(r, 5));
  }
  await heavy;
  cheap.sort((a, b) => a - b);
  const p99 = cheap[Math.min(cheap.length - 1, Math.floor(cheap.length * 0.99))];
  await app.close();
  const size = statSync(db).size;
  printTable(`Report queries through HTTP (${ingested.toLocaleString()} supply+demand facts, 31 days)`, [
    ["measure", "value", "goal"],
    ["seed + ingest", `${(ingested / seedSeconds).toFixed(0)} facts/s (${seedSeconds.toFixed(1)} s)`, "> 500,000/s ingest"],
    ["store size on disk", `${(size / 1024 / 1024).toFixed(1)} MiB`, ""],
    ["grouped month query (date × country × app, 5 countries)", `${g.median.toFixed(1)} ms median, ${g.rows} rows`, "< 250 ms"],
    ["month total", `${t.median.toFixed(1)} ms median`, "< 50 ms"],
    ["cheap request p99 during heavy reports", `${p99.toFixed(1)} ms over ${cheap.length} samples`, "stays small"],
  ]);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
