// Background threads at a lower priority (service/thread-priority.ts): the nice value each thread
// has, as Linux shows it in /proc/self/task/<tid>/stat, after the store opens and writes a large
// report with `background.nice`; the event loop's thread keeps its own. With `background.idle`, the
// same threads under SCHED_IDLE (util-linux's chrt). Linux only.
import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { DuckDBReportStore } from "../../service/store/duckdb/store.js";
import { heldPoolThreads, idlePolicy, lowerPriority, ownThreadId, policyOf, poolThreadIds, threadIds } from "../../service/thread-priority.js";
import { supply, supplyQuery } from "./helpers.js";
import { hasChrt } from "../helpers/chrt.js";
import { ROOT } from "../helpers/server-process.js";

/** A thread's nice value: field 19 of its stat line, the 17th after the command's closing parenthesis. */
const niceOf = (tid: number) => Number(readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1].split(" ")[16]);

/** A thread of its own for a test to renice, its id, and how to end it. */
async function spareThread(): Promise<{ tid: number; end: () => Promise<number> }> {
  const worker = new Worker(`require("node:worker_threads").parentPort.postMessage(require("node:fs").readlinkSync("/proc/thread-self")); setInterval(() => {}, 1000);`, { eval: true });
  const link = await new Promise<string>((resolve) => worker.once("message", resolve));
  return { tid: Number(/\/task\/(\d+)$/.exec(link)![1]), end: () => worker.terminate() };
}

/** Linux's SCHED_OTHER and SCHED_IDLE, as /proc shows a thread's policy. */
const [SCHED_OTHER, SCHED_IDLE] = [0, 5];


describe.skipIf(!existsSync("/proc/thread-self"))("background threads' priority (Linux)", () => {
  it("lowers a thread's priority, and never raises one", async () => {
    const { tid, end } = await spareThread();
    try {
      expect(niceOf(tid)).toBe(0);
      expect(lowerPriority([tid], 7)).toEqual([tid]);
      expect(niceOf(tid)).toBe(7);
      expect(lowerPriority([tid], 3)).toEqual([]);
      expect(niceOf(tid)).toBe(7);
      // An ended thread is skipped.
      expect(lowerPriority([2 ** 30], 7)).toEqual([]);
      expect(() => lowerPriority([tid], 20)).toThrow(/0 to 19/);
    } finally {
      await end();
    }
  });

  it("finds libuv's threadpool threads, none of them the event loop's", async () => {
    const pool = await poolThreadIds();
    expect(pool).toHaveLength(Number(process.env.UV_THREADPOOL_SIZE ?? 4));
    expect(pool).not.toContain(ownThreadId());
    expect(ownThreadId()).toBe(process.pid);
    for (const tid of pool) expect(threadIds()).toContain(tid);
  });

  it("finds every pool thread while one of them is busy with a long task (it is held once that ends)", async () => {
    // The long task: an open of a FIFO for reading, which waits for a writer (released after 50 ms).
    const dir = mkdtempSync(join(tmpdir(), "adxkit-busy-pool-"));
    const fifo = join(dir, "busy");
    execFileSync("mkfifo", [fifo]);
    const busy = open(fifo, "r");
    const release = setTimeout(() => closeSync(openSync(fifo, constants.O_RDWR)), 50);
    try {
      // Held, not found by the readlink rounds (which miss a busy thread): undefined would mean the fallback ran.
      const pool = await heldPoolThreads(Number(process.env.UV_THREADPOOL_SIZE ?? 4));
      expect(pool).toHaveLength(Number(process.env.UV_THREADPOOL_SIZE ?? 4));
      expect(pool).not.toContain(ownThreadId());
      expect(new Set(pool).size).toBe(pool?.length);
    } finally {
      clearTimeout(release);
      const writer = openSync(fifo, constants.O_RDWR);
      await (await busy).close();
      closeSync(writer);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a store opened with a background nice value lowers DuckDB's threads, the pool's and the report writer's, not the event loop's", { timeout: 60_000 }, async () => {
    const before = threadIds();
    const store = await DuckDBReportStore.open(":memory:", { threads: 2, background: { nice: 9, idle: false }, writerFromRows: 1 });
    try {
      const opened = threadIds();
      const duckdb = opened.filter((tid) => !before.includes(tid));
      // threads: 2 is one thread of DuckDB's own beside the one that runs each query.
      expect(duckdb.length).toBeGreaterThanOrEqual(1);
      const pool = await poolThreadIds();
      for (const tid of [...duckdb, ...pool]) expect(niceOf(tid)).toBe(9);

      await store.ingest(Array.from({ length: 50 }, (_, i) => supply({ app_bundle_id: `app-${i}` })));
      const answer = await store.report(supplyQuery({ dimensions: ["app_bundle_id"], metrics: ["revenue"] }));
      expect(answer.total).toBe(50);
      // The writer's thread started with that first report with dimensions (writerFromRows: 1);
      // run from TypeScript, it starts tsx's loader thread before the writer's module lowers its own.
      const started = threadIds().filter((tid) => !opened.includes(tid));
      expect(started.filter((tid) => niceOf(tid) === 9)).toHaveLength(1);
      expect(niceOf(process.pid)).toBe(0);
    } finally {
      await store.close();
    }
  });

  it.skipIf(!hasChrt())("puts a thread under SCHED_IDLE, once; an ended thread is skipped", async () => {
    const { tid, end } = await spareThread();
    try {
      expect(policyOf(tid)).toBe(SCHED_OTHER);
      expect(idlePolicy([tid])).toEqual([tid]);
      expect(policyOf(tid)).toBe(SCHED_IDLE);
      expect(idlePolicy([tid])).toEqual([]);
      expect(idlePolicy([2 ** 30])).toEqual([]);
      expect(policyOf(process.pid)).toBe(SCHED_OTHER);
    } finally {
      await end();
    }
  });

  it.skipIf(!hasChrt())("a store opened with background idle puts DuckDB's threads, the pool's and the report writer's under SCHED_IDLE, not the event loop's", { timeout: 120_000 }, async () => {
    // In a process and session of its own (idle-store-child.ts says why), as `adxkit serve` runs.
    const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("idle-store-child.ts", import.meta.url))], { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    const code = await new Promise<number | null>((done) => child.once("exit", done));
    expect(code, stderr).toBe(0);
    const seen = JSON.parse(stdout) as { duckdbThreads: number; atOpen: number[]; total: number; started: number[]; eventLoop: number };
    expect(seen.duckdbThreads).toBeGreaterThanOrEqual(1);
    expect(seen.atOpen.length).toBe(seen.duckdbThreads + 4);
    expect(seen.atOpen.every((policy) => policy === SCHED_IDLE)).toBe(true);
    expect(seen.total).toBe(50);
    // The writer's thread started with that first report with dimensions (writerFromRows: 1); tsx's loader thread starts too.
    expect(seen.started.filter((policy) => policy === SCHED_IDLE)).toHaveLength(1);
    expect(seen.eventLoop).toBe(SCHED_OTHER);
  });
});
