/**
 * CPU time of this process's main thread alone, µs: process.cpuUsage counts every thread (the
 * exchange's notice thread, libuv's pool, V8's helpers). Read from Linux's per-thread counters
 * (utime + stime of the thread whose id is the pid, in clock ticks of 10 ms: exact enough over
 * rounds of seconds); elsewhere the event loop's busy time, which also counts time spent
 * waiting for a core.
 */
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const TICK_MICROS = 10_000;

export function mainThreadCpuMicros(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    // Fields after the command name in parentheses (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
  } catch {
    return performance.eventLoopUtilization().active * 1000;
  }
}

/** CPU time of each live thread of this process, µs by thread id (Linux only; empty elsewhere). */
export function threadCpuMicros(): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const id of readdirSync("/proc/self/task")) {
      try {
        const stat = readFileSync(`/proc/self/task/${id}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out.set(Number(id), (Number(fields[11]) + Number(fields[12])) * TICK_MICROS);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  } catch {
    // Not Linux.
  }
  return out;
}
