/**
 * bench/auction.ts's child processes, seen from the parent: starting one, and asking a target
 * process (one or more exchanges, each on its own port) for its CPU time, an exchange's counters,
 * and whether its win notices have drained. Each child answers one question at a time, in order:
 * the parent never asks a child two at once.
 */
import { fork, type ChildProcess } from "node:child_process";

/** Forks `script` with `args`; resolves with the child's first message (its ports, or ready). */
export function startChild(script: string, args: string[], profile = false, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; message: any }> {
  // ADXKIT_BENCH_CPU_PROF=DIR writes a CPU profile of the target process (exchange + bare route) into DIR.
  const prof = profile && process.env.ADXKIT_BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.ADXKIT_BENCH_CPU_PROF}`] : [];
  const child = fork(script, args, { execArgv: [...process.execArgv, ...prof], env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("message", (message) => resolve({ child, message }));
    child.once("exit", (code) => reject(new Error(`bench child ${args[0]} exited with ${code}`)));
  });
}

/** The next message of `child` that has `field`. */
function reply<T>(child: ChildProcess, field: string): Promise<T> {
  return new Promise((resolve) => {
    const listener = (m: any) => {
      if (m?.[field] === undefined) return;
      child.off("message", listener);
      resolve(m);
    };
    child.on("message", listener);
  });
}

/** A child's CPU time (all its threads) and its main thread's (when it tells), µs. */
export async function cpuOf(child: ChildProcess): Promise<{ cpu: number; thread: number }> {
  const answer = reply<{ cpu: NodeJS.CpuUsage; thread?: number }>(child, "cpu");
  child.send({ cpu: true });
  const m = await answer;
  // The bidders' process tells no thread time.
  return { cpu: m.cpu.user + m.cpu.system, thread: m.thread ?? 0 };
}

/** An exchange's counters (`handle.stats()`) in a target process. */
export function statsOf(child: ChildProcess, key: string): Promise<any> {
  const answer = reply<{ stats: any }>(child, "stats");
  child.send({ stats: key });
  return answer.then((m) => m.stats);
}

/**
 * Win notices still in flight when the load stops are the exchange's work of that round: wait
 * for them (bounded), and count the wait in the round's time and CPU. Done when none is pending
 * and none was sent since the last look (auctions still running when the load stopped send
 * theirs late). Returns the milliseconds waited.
 */
export async function noticesDrained(child: ChildProcess, key: string): Promise<number> {
  const start = Date.now();
  let lastSent = -1;
  for (;;) {
    const answer = reply<{ noticesPending: { pending: number; sent: number } }>(child, "noticesPending");
    child.send({ notices: key });
    const { pending, sent } = (await answer).noticesPending;
    if ((pending === 0 && sent === lastSent) || Date.now() - start > 10_000) return Date.now() - start;
    lastSent = sent;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Waits until `children` together use under a tenth of a core over 200 ms (at most `maxMs`):
 * what a round left behind (answers to timed-out calls, notices, a collection) is over before
 * the next is measured. Returns the milliseconds waited. 10 s at most: after a round at twice the
 * capacity without shedding (4,879 requests unanswered after 5 s), that exchange answered 3-68/s
 * in time at its capacity for the next 10 s (04:45, load ~5), and 3 s let it run on beside the
 * next round.
 */
export async function quiet(children: ChildProcess[], maxMs = 10_000): Promise<number> {
  const start = Date.now();
  const total = async () => (await Promise.all(children.map(cpuOf))).reduce((n, c) => n + c.cpu, 0);
  let before = await total();
  while (Date.now() - start < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = await total();
    if (now - before < 20_000) break;
    before = now;
  }
  return Date.now() - start;
}
