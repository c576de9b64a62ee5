// The settling series of /metrics (service/ops/settling.ts, metrics.ts): runs by result, days
// settled by side, the last success's time, late billed rows by side; absent on a store that
// settles nothing (DuckDB). Runs are driven by the test (run(), settle()), never waited for.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { ServerMetrics } from "../../service/ops/metrics.js";
import { startSettling } from "../../service/ops/settling.js";
import { startServer } from "../../service/server.js";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { sample } from "../helpers/metrics-text.js";

/** An in-memory DuckDB store that settles as `runs` say (each a result or a failure), in turn. */
async function settlingStore(runs: (Record<"supply" | "demand", string[]> | Error)[]) {
  const base = await openStore({ db: ":memory:" });
  let calls = 0;
  const store: ReportStore = Object.assign(Object.create(base) as ReportStore, {
    settleBilled: async () => {
      const next = runs[Math.min(calls++, runs.length - 1)];
      if (next instanceof Error) throw next;
      return next;
    },
    lateBilledRows: () => ({ supply: 3, demand: 1 }),
  });
  return { base, store, calls: () => calls };
}

const log = () => {
  const lines: string[] = [];
  return { lines, info: (_: object, message: string) => void lines.push(`info ${message}`), warn: (_: object, message: string) => void lines.push(`warn ${message}`) };
};

describe("settling metrics", () => {
  const opened: ReportStore[] = [];
  afterAll(async () => {
    for (const store of opened) await store.close();
  });

  test("count runs by result, days by side, the last success and the late rows", async () => {
    const { base, store } = await settlingStore([{ supply: ["2026-11-20", "2026-11-21"], demand: ["2026-11-20"] }, new Error("ClickHouse is down"), { supply: [], demand: [] }]);
    opened.push(base);
    const metrics = new ServerMetrics();
    const lines = log();
    const before = Date.now() / 1000;
    const task = startSettling(store, { log: lines, metrics })!;
    try {
      await task.run(); // joins the run at start
      let text = await metrics.text();
      expect(sample(text, 'adxkit_settle_runs_total{result="ok"}')).toBe(1);
      expect(sample(text, 'adxkit_settle_runs_total{result="failed"}')).toBe(0);
      expect(sample(text, 'adxkit_settle_days_total{side="supply"}')).toBe(2);
      expect(sample(text, 'adxkit_settle_days_total{side="demand"}')).toBe(1);
      expect(sample(text, 'adxkit_settle_late_billed_rows_total{side="supply"}')).toBe(3);
      expect(sample(text, 'adxkit_settle_late_billed_rows_total{side="demand"}')).toBe(1);
      const lastSuccess = sample(text, "adxkit_settle_last_success_timestamp_seconds")!;
      expect(lastSuccess).toBeGreaterThanOrEqual(before);
      expect(lastSuccess).toBeLessThanOrEqual(Date.now() / 1000);
      expect(text).toContain("# TYPE adxkit_settle_runs_total counter");
      expect(text).toContain("# TYPE adxkit_settle_last_success_timestamp_seconds gauge");

      await task.run();
      text = await metrics.text();
      expect(sample(text, 'adxkit_settle_runs_total{result="failed"}')).toBe(1);
      expect(sample(text, 'adxkit_settle_runs_total{result="ok"}')).toBe(1);
      expect(sample(text, "adxkit_settle_last_success_timestamp_seconds")).toBe(lastSuccess);

      await task.run();
      text = await metrics.text();
      expect(sample(text, 'adxkit_settle_runs_total{result="ok"}')).toBe(2);
      expect(sample(text, 'adxkit_settle_days_total{side="supply"}')).toBe(2);
      expect(lines.lines).toEqual(["info billed impressions settled", "warn settling billed impressions failed; the next run tries again"]);
      // Each series is listed where the metrics are documented.
      const documented = readFileSync(join(import.meta.dirname, "../../docs/operations.md"), "utf8");
      const names = [...text.matchAll(/^# TYPE (adxkit_settle_\w+) /gm)].map((m) => m[1]);
      expect(names).toHaveLength(4);
      for (const name of names) expect(documented).toContain(`| \`${name}\` |`);
    } finally {
      await task.stop();
    }
  });

  test("are absent on a store that settles nothing (DuckDB)", async () => {
    const store = await openStore({ db: ":memory:" });
    opened.push(store);
    const metrics = new ServerMetrics();
    expect(startSettling(store, { log: log(), metrics })).toBeUndefined();
    expect(await metrics.text()).not.toContain("adxkit_settle_");
  });

  test("are served by adxkit serve's /metrics (127.0.0.1, a port the system picks)", async () => {
    const { base, store, calls } = await settlingStore([{ supply: ["2026-11-20"], demand: ["2026-11-20"] }]);
    opened.push(base);
    const server = await startServer({ db: ":memory:", store, port: 0, logLevel: "silent" });
    try {
      await server.settle();
      const text = await (await fetch(`${server.url}/metrics`)).text();
      expect(sample(text, 'adxkit_settle_runs_total{result="ok"}')).toBe(calls());
      expect(sample(text, 'adxkit_settle_days_total{side="supply"}')).toBe(calls());
      expect(sample(text, 'adxkit_settle_late_billed_rows_total{side="supply"}')).toBe(3);
    } finally {
      await server.close();
    }
  });
});
