// `adxkit serve --background-nice N` (spec/schemas/serve-options.yaml): the server's DuckDB and
// threadpool threads run at nice N, its event loop's thread at the nice it was started with, as
// Linux shows them in /proc/<pid>/task/<tid>/stat. Runs the compiled CLI (dist/) as a child
// process on 127.0.0.1. With --background-idle, the same threads under SCHED_IDLE (policy 5, field
// 41 of the stat line). Linux only.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BUILT, freePort, startServerProcess, stopServerProcess } from "../helpers/server-process.js";
import { hasChrt } from "../helpers/chrt.js";

/** Each thread's nice value (field 19 of its stat line), or with `field: 41` its scheduling policy, by thread id. */
function niceValues(pid: number, field = 19): Map<number, number> {
  const values = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      values.set(tid, Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1].split(" ")[field - 3]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return values;
}

const LINUX = existsSync("/proc/thread-self");

/** The nice value the servers start with: this process's own (0 unless the tests run under `nice`). */
const OWN = getPriority();

describe.skipIf(!BUILT || !LINUX || OWN !== 0)(`serve's background threads' priority${BUILT ? "" : " — SKIPPED: dist/ is not built"}`, () => {
  const dir = mkdtempSync(join(tmpdir(), "adxkit-background-nice-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The nice values of a server started with ARGS: its event loop's, and how many other threads have each value. */
  async function threadsOf(name: string, args: string[], env: NodeJS.ProcessEnv = process.env, field = 19): Promise<{ eventLoop: number; others: Record<number, number> }> {
    // SCHED_IDLE threads (field 41's policy) start only in a scheduling group of their own: beside busy work they would get no core.
    const server = await startServerProcess(name, ["--db", join(dir, `${name}.duckdb`), ...args], await freePort(), env, field === 41);
    try {
      const pid = server.child.pid!;
      const values = niceValues(pid, field);
      const others: Record<number, number> = {};
      for (const [tid, nice] of values) if (tid !== pid) others[nice] = (others[nice] ?? 0) + 1;
      return { eventLoop: values.get(pid)!, others };
    } finally {
      await stopServerProcess(server);
    }
  }

  it("--background-nice 7: DuckDB's thread and libuv's four at 7, the event loop's and V8's at the server's own", { timeout: 120_000 }, async () => {
    const { eventLoop, others } = await threadsOf("flag", ["--background-nice", "7", "--duckdb-threads", "2"]);
    expect(eventLoop).toBe(0);
    // libuv's threadpool (4) and DuckDB's one thread beside the query's; the report writer's starts with the first large report.
    expect(others[7]).toBe(5);
    expect(others[0]).toBeGreaterThan(0);
  });

  it("by default (10), and not at all with ADXKIT_BACKGROUND_NICE=0", { timeout: 120_000 }, async () => {
    const byDefault = await threadsOf("default", ["--duckdb-threads", "2"]);
    expect(byDefault.others[10]).toBe(5);
    const off = await threadsOf("off", ["--duckdb-threads", "2"], { ...process.env, ADXKIT_BACKGROUND_NICE: "0" });
    expect(Object.keys(off.others)).toEqual(["0"]);
    expect(off.eventLoop).toBe(0);
  });

  it.skipIf(!hasChrt())("--background-idle: DuckDB's thread and libuv's four under SCHED_IDLE, the event loop's and V8's not", { timeout: 120_000 }, async () => {
    const { eventLoop, others } = await threadsOf("idle", ["--background-idle", "--duckdb-threads", "2"], process.env, 41);
    expect(eventLoop).toBe(0);
    expect(others[5]).toBe(5);
    expect(others[0]).toBeGreaterThan(0);
  });
});
