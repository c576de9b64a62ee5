/**
 * Background threads at a lower scheduling priority than the event loop. On a small server,
 * DuckDB's query threads and the report writer's thread otherwise take the cores that the event
 * loop's answers wait for (docs/benchmarks.md, "Heavy reports, part three"). Linux keeps a nice
 * value per thread (setpriority on a thread id changes that thread only), and any process may
 * raise its own threads' nice value; elsewhere (no /proc), or where refused, nothing changes.
 * Optionally (`idlePolicy`) they also go to Linux's SCHED_IDLE policy, which a waking event loop
 * preempts at once ("Background threads at SCHED_IDLE", docs/benchmarks.md).
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { open, readlink } from "node:fs/promises";
import { getPriority, setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** The highest nice value (the lowest priority) Linux knows. */
export const MAX_NICE = 19;

/** The ids of this process's threads (Linux), else none. */
export function threadIds(): number[] {
  try {
    return readdirSync("/proc/self/task").map(Number);
  } catch {
    return [];
  }
}

/** The calling thread's id (Linux: /proc/thread-self names `<pid>/task/<tid>`), or undefined. */
export function ownThreadId(): number | undefined {
  try {
    return threadIdOf(readlinkSync("/proc/thread-self"));
  } catch {
    return undefined;
  }
}

function threadIdOf(link: string): number | undefined {
  const match = /\/task\/(\d+)$/.exec(link);
  return match === null ? undefined : Number(match[1]);
}

/**
 * The ids of libuv's threadpool threads, where DuckDB's node bindings run every query. First by
 * holding every pool thread at once (`heldPoolThreads`); where that cannot be done, by rounds of
 * async readlinks of /proc/thread-self, each naming the pool thread it ran on — which on a busy
 * machine can miss a thread: one awake thread may drain every round before the others run.
 */
export async function poolThreadIds(size = poolSize()): Promise<number[]> {
  return (await heldPoolThreads(size)) ?? (await readlinkRounds(size));
}

/** Rounds of concurrent readlinks until every pool thread answered (at most 20 rounds). */
async function readlinkRounds(size: number): Promise<number[]> {
  const found = new Set<number>();
  for (let round = 0; round < 20 && found.size < size; round++) {
    const links = await Promise.all(Array.from({ length: 4 * size }, () => readlink("/proc/thread-self").catch(() => "")));
    for (const link of links) {
      const tid = threadIdOf(link);
      if (tid !== undefined) found.add(tid);
    }
    if (found.size === 0) break;
  }
  return [...found];
}

/** Each thread's current system call: its line in /proc/self/task/<tid>/syscall (the number, its arguments, …; "running" when in none). */
function systemCalls(): Map<number, string> {
  const calls = new Map<number, string>();
  for (const tid of threadIds()) {
    try {
      calls.set(tid, readFileSync(`/proc/self/task/${tid}/syscall`, "utf8").trim());
    } catch {
      // The thread ended, or /proc does not show it.
    }
  }
  return calls;
}

/**
 * The pool's threads, found by holding all of them at once: opening a FIFO for reading waits for
 * a writer, so `size` such opens occupy every pool thread, and the threads that moved into one
 * and the same system call are the pool's. Undefined where it cannot be done (no mkfifo, no
 * /proc syscall files, a pool too large) or when not all were held within 10 s (a pool thread
 * busy with a long task is held once it ends).
 */
export async function heldPoolThreads(size: number): Promise<number[] | undefined> {
  if (size > 64) return undefined;
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), "adxkit-pool-"));
  } catch {
    return undefined;
  }
  const fifos = Array.from({ length: size }, (_, i) => join(dir, `hold-${i}`));
  try {
    execFileSync("mkfifo", ["-m", "600", ...fifos], { stdio: "ignore" });
    const before = systemCalls();
    if (before.size === 0) return undefined;
    const readers = fifos.map((fifo) => open(fifo, "r"));
    let held: number[] | undefined;
    try {
      for (const started = Date.now(); held === undefined && Date.now() - started < 10_000; await sleep(2)) held = movedTogether(before, systemCalls(), size);
    } finally {
      // Opening a FIFO for reading and writing never waits (Linux): it lets every reader, waiting or still queued, open.
      const writers = fifos.map((fifo) => openSync(fifo, constants.O_RDWR));
      for (const reader of await Promise.allSettled(readers)) if (reader.status === "fulfilled") await reader.value.close();
      for (const fd of writers) closeSync(fd);
    }
    return held;
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The `size` threads that are now all in calls of one system call number, each in a call it was
 * not in before (the arguments tell two opens apart), or undefined.
 */
function movedTogether(before: Map<number, string>, now: Map<number, string>, size: number): number[] | undefined {
  const byCall = new Map<string, number[]>();
  for (const [tid, call] of now) {
    if (call === "running" || call === before.get(tid)) continue;
    const number = call.split(" ")[0];
    const tids = byCall.get(number) ?? [];
    tids.push(tid);
    byCall.set(number, tids);
  }
  return [...byCall.values()].find((tids) => tids.length === size);
}

/** libuv's threadpool size: UV_THREADPOOL_SIZE (1 to 1024), else 4. */
function poolSize(): number {
  const size = Number(process.env.UV_THREADPOOL_SIZE);
  return Number.isInteger(size) && size >= 1 ? Math.min(size, 1024) : 4;
}

/**
 * Sets each thread's nice value to `nice` where it is lower (a thread is never given a higher
 * priority than it has). The threads changed; an ended thread or a refusal is skipped.
 */
export function lowerPriority(tids: Iterable<number>, nice: number): number[] {
  if (!Number.isInteger(nice) || nice < 0 || nice > MAX_NICE) throw new RangeError(`a background nice value must be an integer from 0 to ${MAX_NICE} (got ${nice})`);
  const changed: number[] = [];
  for (const tid of tids) {
    try {
      if (getPriority(tid) >= nice) continue;
      setPriority(tid, nice);
      changed.push(tid);
    } catch {
      // The thread ended, or the system refuses: it keeps its priority.
    }
  }
  return changed;
}

/** Linux's number of the SCHED_IDLE policy (sched.h), as /proc shows a thread's policy. */
const SCHED_IDLE = 5;

/** A thread's scheduling policy: field 41 of its stat line, the 39th after the command's closing parenthesis; undefined when unknown. */
export function policyOf(tid: number): number | undefined {
  try {
    const policy = Number(readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1].split(" ")[38]);
    return Number.isInteger(policy) ? policy : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Puts each thread under SCHED_IDLE (Linux): it runs only when no thread of another policy in its
 * scheduling group wants its core, and a waking one preempts it at once, where a nice value only
 * shortens its turn. Node has no call for it: util-linux's `chrt --idle -p 0 <tid>` sets it (one
 * process per thread, a few ms each, once per thread). The threads now under it; an ended thread,
 * a refusal or no `chrt` is skipped (the thread keeps its policy and nice value).
 */
export function idlePolicy(tids: Iterable<number>): number[] {
  const changed: number[] = [];
  for (const tid of tids) {
    if (policyOf(tid) === SCHED_IDLE) continue;
    try {
      execFileSync("chrt", ["--idle", "-p", "0", String(tid)], { stdio: "ignore", timeout: 5_000 });
    } catch {
      // No chrt, a refusal, or the thread ended.
    }
    if (policyOf(tid) === SCHED_IDLE) changed.push(tid);
  }
  return changed;
}

/** Where a store's background threads stand behind the event loop (serve's --background-nice and --background-idle). */
export interface BackgroundPriority {
  /** Nice value, 0–19 (0: unchanged). */
  nice: number;
  /** Also under SCHED_IDLE (`idlePolicy`). */
  idle: boolean;
}

/** Whether `priority` changes anything (a thread left as it is needs no id looked up). */
export const lowersThreads = (priority: BackgroundPriority | undefined): priority is BackgroundPriority => priority !== undefined && (priority.nice > 0 || priority.idle);

/**
 * Puts background threads behind the event loop, as the store's options ask. DuckDB's and libuv's
 * threads at open (connection.ts) and the report writer's thread at its start (report-writer-worker.ts).
 */
export function putBehind(tids: number[], { nice, idle }: BackgroundPriority): void {
  if (nice > 0) lowerPriority(tids, nice);
  if (idle) idlePolicy(tids);
}
