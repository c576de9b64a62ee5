/**
 * Background threads at a lower scheduling priority than the event loop. On a small server,
 * DuckDB's query threads and the report writer's thread otherwise take the cores that the event
 * loop's answers wait for (docs/benchmarks.md, "Heavy reports, part three"). Linux keeps a nice
 * value per thread (setpriority on a thread id changes that thread only), and any process may
 * raise its own threads' nice value; elsewhere (no /proc), or where refused, nothing changes.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { readlink } from "node:fs/promises";
import { getPriority, setPriority } from "node:os";

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
 * The ids of libuv's threadpool threads, where DuckDB's node bindings run every query: an async
 * readlink of /proc/thread-self runs on one of them and names it. Concurrent rounds until every
 * thread of the pool answered (at most 20 rounds: a pool busy with long work may not).
 */
export async function poolThreadIds(size = poolSize()): Promise<number[]> {
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
