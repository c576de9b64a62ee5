/**
 * Run by thread-priority.test.ts in a session of its own (so in a scheduling group of its own):
 * opens a store with background idle, loads 50 facts, reports them by app, and prints as JSON the
 * policies of DuckDB's threads and libuv's pool at open, the threads started since (the report
 * writer's among them) and the event loop's. Beside busy work in the test run's own group, its
 * SCHED_IDLE threads would get no core at all, and the store's migrations run on them.
 */
import { DuckDBReportStore } from "../../service/store/duckdb/store.js";
import { policyOf, poolThreadIds, threadIds } from "../../service/thread-priority.js";
import { supply, supplyQuery } from "./facts.js";

const before = threadIds();
const store = await DuckDBReportStore.open(":memory:", { threads: 2, background: { nice: 0, idle: true }, writerFromRows: 1 });
try {
  const opened = threadIds();
  const duckdb = opened.filter((tid) => !before.includes(tid));
  const atOpen = [...duckdb, ...(await poolThreadIds())].map(policyOf);
  await store.ingest(Array.from({ length: 50 }, (_, i) => supply({ app_bundle_id: `app-${i}` })));
  const total = (await store.report(supplyQuery({ dimensions: ["app_bundle_id"], metrics: ["revenue"] }))).total;
  const started = threadIds()
    .filter((tid) => !opened.includes(tid))
    .map(policyOf);
  process.stdout.write(JSON.stringify({ duckdbThreads: duckdb.length, atOpen, total, started, eventLoop: policyOf(process.pid) }));
} finally {
  await store.close();
}
