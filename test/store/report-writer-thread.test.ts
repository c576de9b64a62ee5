// Large reports written on the report writer's thread (service/store/duckdb/report-writer-thread.ts)
// are byte for byte the rows the event loop writes, and a thread that fails or exits fails only
// the reports it was writing, with an error saying so (-1 through HTTP), never the process.
import { Worker } from "node:worker_threads";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../service/app.js";
import { DuckDBReportStore } from "../../service/store/duckdb/store.js";
import type { Fact, ReportQuery } from "../../service/store/index.js";
import { startWorker } from "../../service/worker-thread.js";
import { demandFactArb, queryArb, supplyFactArb } from "./report-model.js";
import { supply, supplyQuery } from "./helpers.js";
import { answersOfTwoStores, text } from "./two-stores.js";

/** Names JSON escapes or that sort differently as UTF-8 bytes than as UTF-16, and the empty one. */
const NAMES = ['a"b', "back\\slash", "tab\there", "\u0001\u001f", "é", "\uFFFD", "\u{1F600}", "", "z", "Z"];

/** Each query's answer from a store writing every report with dimensions on the thread and one writing them all on the event loop. */
const bothAnswers = (batches: Fact[][], queries: ReportQuery[]) =>
  answersOfTwoStores([{ threads: 1, writerFromRows: 1 }, { threads: 1, writerFromRows: Number.POSITIVE_INFINITY }], batches, queries);

/** `count` supply facts of pub-1, over many apps (named from NAMES too), countries and days. */
function manyFacts(count: number, appPrefix: string): Fact[] {
  return Array.from({ length: count }, (_, i) =>
    supply({
      app_bundle_id: i % 7 === 0 ? `${NAMES[i % NAMES.length]}${appPrefix}` : `${appPrefix}.app-${i % 211}`,
      country: ["USA", "GBR", "DEU", "JPN", "FRA"][i % 5],
      date_hour: `2026-10-${String(1 + (i % 28)).padStart(2, "0")}T${String(i % 24).padStart(2, "0")}:00:00`,
      request: 1000 + i,
      response: i % 13,
      impression: i % 11,
      revenue: (i % 97) / 7,
    }),
  );
}

const wide = supplyQuery({ dimensions: ["date", "country", "app_bundle_id"], metrics: ["revenue", "request", "fill_rate", "ecpm"] });

describe("the report writer's thread", () => {
  it("writes the event loop's bytes, for random facts and queries", { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(supplyFactArb, demandFactArb), { maxLength: 100 }), fc.array(queryArb, { minLength: 1, maxLength: 5 }), async (facts, queries) => {
        const [onThread, onLoop] = await bothAnswers([facts], queries);
        expect(onThread).toEqual(onLoop);
      }),
      { numRuns: 12 },
    );
  });

  it("writes the event loop's bytes for thousands of rows, names added between reports, and a limit's cut", { timeout: 120_000 }, async () => {
    const cut = supplyQuery({ dimensions: ["app_bundle_id", "date"], metrics: ["revenue", "request", "fill_rate", "ecpm"], limit: 777 });
    const [onThread, onLoop] = await bothAnswers([manyFacts(6000, "com.first"), manyFacts(3000, "org.second")], [wide, cut]);
    expect(onThread).toEqual(onLoop);
    expect(onThread[0]).toMatch(/^5\d{3} \[\{"date":"2026-10-01","country":"DEU","app_bundle_id":/);
    expect(onThread[1]).toMatch(/^\d+ \[/);
  });

  it("a thread that exits fails its report with an error saying so; the next report starts another", { timeout: 60_000 }, async () => {
    let starts = 0;
    const real = () => startWorker(new URL("../../service/store/duckdb/report-writer-thread.ts", import.meta.url).href, "report-writer-worker");
    // The first thread exits when asked to write; those after are the real one.
    const exiting = () => new Worker(`require("node:worker_threads").parentPort.on("message", (m) => { if (m.type === "write") process.exit(7); });`, { eval: true });
    const store = await DuckDBReportStore.open(":memory:", { threads: 1, writerFromRows: 1, startWriter: () => (++starts === 1 ? exiting() : real()) });
    try {
      await store.ingest(manyFacts(200, "com.x"));
      await expect(store.reportJson(wide)).rejects.toThrow(/report writer thread exited \(code 7\) while writing a report/);
      const answer = await store.reportJson(wide);
      expect(text(answer.rowsJson)).toMatch(/^\[\{"date":"2026-10-01"/);
      expect(starts).toBe(2);
    } finally {
      await store.close();
    }
  });

  it("a report reading the facts' detail keeps its slot until written: the next one's query waits for it", { timeout: 60_000 }, async () => {
    // A writer that holds each write until told, then fails it: what it holds shows which reports got past their query.
    const held = new Worker(
      `const { parentPort } = require("node:worker_threads"); const jobs = [];
       parentPort.on("message", (m) => {
         if (m.type === "write") jobs.push(m.id);
         if (m.type === "count") parentPort.postMessage({ type: "count", held: jobs.length });
         if (m.type === "go") for (const id of jobs.splice(0)) parentPort.postMessage({ type: "failed", id, message: "held " + id });
       });`,
      { eval: true },
    );
    const heldCount = () =>
      new Promise<number>((resolve) => {
        const answer = (m: { type: string; held: number }) => {
          if (m.type !== "count") return;
          held.off("message", answer);
          resolve(m.held);
        };
        held.on("message", answer);
        held.postMessage({ type: "count" });
      });
    const store = await DuckDBReportStore.open(":memory:", { threads: 1, writerFromRows: 1, startWriter: () => held });
    try {
      await store.ingest(manyFacts(200, "com.x"));
      const first = store.reportJson(wide);
      const second = store.reportJson(wide);
      const firstFailed = expect(first).rejects.toThrow(/held/);
      const secondFailed = expect(second).rejects.toThrow(/held/);
      while ((await heldCount()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      // The second query (milliseconds on 200 facts) had time to run, had the slot been free.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await heldCount()).toBe(1);
      held.postMessage({ type: "go" });
      await firstFailed;
      while ((await heldCount()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      held.postMessage({ type: "go" });
      await secondFailed;
      // A month total (a monthly rollup answers it) never waits for the slot.
      const total = await store.reportJson(supplyQuery({ metrics: ["revenue"] }));
      expect(total.total).toBe(1);
    } finally {
      held.postMessage({ type: "go" });
      await store.close();
    }
  });

  it("a thread failing a report answers -1 through HTTP and the server keeps answering", { timeout: 60_000 }, async () => {
    // A thread whose code throws on a write (its error event), as a bug there would.
    const throwing = () => new Worker(`require("node:worker_threads").parentPort.on("message", (m) => { if (m.type === "write") throw new Error("boom"); });`, { eval: true });
    const store = await DuckDBReportStore.open(":memory:", { threads: 1, writerFromRows: 1, startWriter: throwing });
    const app = await buildApp({ store, logger: false });
    try {
      await store.ingest(manyFacts(200, "com.x"));
      const who = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
      const post = async (body: unknown) => {
        const response = await app.inject({ method: "POST", url: "/api/report/v1", headers: { "content-type": "application/json", "x-userid": who.userid, "x-authorization": who.authorization }, payload: JSON.stringify(body) });
        expect(response.statusCode).toBe(200);
        return JSON.parse(response.body);
      };
      const october = { start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59" };
      const failed = await post({ ...october, dimensions: ["date", "app_bundle_id"], metrics: ["revenue"] });
      expect(failed.status).toEqual({ code: -1, msg: "system error", detail: expect.stringMatching(/^internal error; request id \S+$/) });
      expect(failed.data).toBeNull();
      // A report without dimensions never goes to the thread.
      const total = await post({ ...october, metrics: ["request"] });
      expect(total.status.code).toBe(0);
      expect(total.data.data).toEqual([{ request: manyFacts(200, "com.x").reduce((sum, f) => sum + (f as { request: number }).request, 0) }]);
    } finally {
      await app.close();
      await store.close();
    }
  });
});
