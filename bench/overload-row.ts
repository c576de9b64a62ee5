/**
 * The overload row of bench/auction.ts (issue 21: offer twice the exchange's capacity; goal 0
 * answers after tmax + 10 ms, and auctions answered in time ≥ 90 % of the capacity).
 *
 * Capacity is measured, not taken from the closed loop: 50 closed-loop connections are bound by
 * their latency (50 / 35-40 ms ≈ 1,300/s here) while the exchange without shedding answered
 * 2,356/s in time at 2,582 offered (2026-11-26 12:27). So an open-loop step search offers rising
 * rates to the exchange without load shedding; the capacity is the most auctions a second it
 * answered in time in a step (its peak), and 90 % of it is offered again before and after the
 * rounds, to tell whether the machine could still run it then. Then each round offers the
 * overload rate to the exchange with its load shedding and without, taking turns. Each variant
 * runs in a process of its own (overload-run.ts), and every step and round starts once the
 * processes are quiet (bench-children.ts): in one shared process, what the round without
 * shedding left behind (its backlog's answers, timers, a collection) ran in the next round's
 * event loop.
 */
import type { OpenLoopOptions, OverloadResult } from "./open-loop.js";
import { addOverload } from "./open-loop.js";

/** What the row needs from bench/auction.ts's processes. */
export interface OverloadRig {
  /** One open-loop run in the generator's process. */
  run(options: OpenLoopOptions): Promise<OverloadResult>;
  /** The exchange target's counters (`handle.stats()`). */
  stats(key: "exchange" | "noshed"): Promise<any>;
  /** Waits for the target's notices in flight (the round's work). */
  drained(key: "exchange" | "noshed"): Promise<unknown>;
  /** CPU time of that target's main thread, µs (each target has a process of its own). */
  threadCpu(key: "exchange" | "noshed" | "shedall"): Promise<number>;
  /** Waits until the bench's processes are quiet (what the last run left behind is over). */
  quiet(): Promise<unknown>;
  /** The exchange with load shedding, without, and shedding every auction (a rate of 0). */
  urls: { exchange: string; noshed: string; shedall: string };
  body: string;
  tmax: number;
}

/** Bid requests sent to all bidders, and times a circuit opened, from a target's stats. */
function bidderCalls(stats: any): { calls: number; opened: number } {
  const calls = Object.values(stats.bidders as Record<string, { requests: number }>).reduce((n, b) => n + b.requests, 0);
  const opened = Object.values((stats.circuits ?? {}) as Record<string, { opened: number }>).reduce((n, c) => n + c.opened, 0);
  return { calls, opened };
}

/**
 * Bidder calls per auction run between two stats: 3 when every auction called the three bench
 * bidders. Under overload the exchange's own lag makes bidders time out, their circuits open, and
 * auctions then run without calling them: far cheaper, so figures with fewer calls measure less.
 */
export function callsPerAuction(before: any, after: any): { perAuction: number; opened: number } {
  const [a, b] = [bidderCalls(before), bidderCalls(after)];
  const ran = after.auctions - after.overloaded - (before.auctions - before.overloaded);
  return { perAuction: ran > 0 ? (b.calls - a.calls) / ran : NaN, opened: b.opened - a.opened };
}

/** One step of the capacity search. */
interface Step {
  offered: number;
  inTime: number;
  late: number;
  requests: number;
  /** Main-thread CPU of the target per auction answered, µs. */
  threadPerAuction: number;
  /** Bidder calls per auction, and circuits opened in the step (callsPerAuction). */
  calls: { perAuction: number; opened: number };
}

/**
 * The exchange's peak throughput without shedding, the "peak": the most auctions a second
 * it answered in time, open loop. From half of `from` (the closed-loop rate, latency-bound below
 * the peak), offers rise by a quarter while each step answers more in time than the best so far
 * (by 5 %); two steps in a row that do not end the climb. A step answering under half its offer
 * in time at the start (a busy minute, a process still cold) is run once more, then the start
 * goes down by 0.6.
 * Why not "the highest offer with ≤ 1 % late", as until 2026-11-27: on this shared machine another
 * process holding the core for 100 ms makes 1 % late at any rate, so that search stopped far below
 * the peak (at 581/s, 04:41, load 7, where the exchange without shedding then answered 1,151/s in
 * time of 1,162 offered).
 * Bounded: at most 12 runs of `seconds` (+ 0.5 s settling) each.
 */
export async function measureCapacity(rig: OverloadRig, from: number, seconds: number): Promise<{ capacity: number; offered: number; steps: Step[]; threadPerAuction: number }> {
  const steps: Step[] = [];
  const run = async (offered: number): Promise<Step> => {
    await rig.quiet();
    const statsBefore = await rig.stats("noshed");
    const before = await rig.threadCpu("noshed");
    const r = await rig.run({ url: rig.urls.noshed, body: rig.body, rate: offered, seconds, settleSeconds: 0.5, connections: 1000, lateAfterMs: rig.tmax + 10 });
    await rig.drained("noshed");
    const thread = (await rig.threadCpu("noshed")) - before;
    const step = { offered, inTime: r.ranInTime / seconds, late: r.late, requests: r.requests, threadPerAuction: thread / (r.answered + r.settling.answered), calls: callsPerAuction(statsBefore, await rig.stats("noshed")) };
    steps.push(step);
    // A step past the peak leaves a backlog (and slow answers) behind: the next run's quiet() waits it out.
    return step;
  };
  let rate = Math.max(200, Math.round(from / 2));
  let best: Step | undefined;
  for (let tries = 0; tries < 4; tries++) {
    const s = await run(rate);
    if (s.inTime >= rate / 2) {
      best = s;
      break;
    }
    if (tries > 0) rate = Math.max(50, Math.round(rate * 0.6));
  }
  for (let misses = 0; best !== undefined && misses < 2 && steps.length < 12; ) {
    rate = Math.round(rate * 1.25);
    const s = await run(rate);
    if (s.inTime > best.inTime * 1.05) {
      best = s;
      misses = 0;
    } else {
      if (s.inTime > best.inTime) best = s;
      misses++;
    }
  }
  return { capacity: best?.inTime ?? 0, offered: best?.offered ?? 0, steps, threadPerAuction: best?.threadPerAuction ?? NaN };
}

/**
 * Main-thread CPU of the target per shed, µs: `rate` offered to the exchange that sheds every
 * auction. A shed is a whole HTTP exchange (its socket read, parse and 204 written) less the
 * auction: where the main thread is the limit and every request is answered, running x of the
 * capacity C while λ is offered needs x + (λ/C − x)·r ≤ 1 (r = shed / auction).
 */
export async function shedCost(rig: OverloadRig, rate: number, seconds: number): Promise<number> {
  await rig.quiet();
  const before = await rig.threadCpu("shedall");
  const r = await rig.run({ url: rig.urls.shedall, body: rig.body, rate, seconds, settleSeconds: 0.5, connections: 1000, lateAfterMs: rig.tmax + 10 });
  return ((await rig.threadCpu("shedall")) - before) / (r.answered + r.settling.answered);
}

/**
 * `rate` offered `times` times to the exchange without shedding: the median of the auctions it
 * answered in time a second, and each run's. Whether the machine can run about the capacity now:
 * the capacity found moved from 726 to 1,210/s between runs (2026-11-27 01:06-01:29), with the
 * machine's other sessions.
 */
export async function checkCapacity(rig: OverloadRig, rate: number, seconds: number, times = 3): Promise<{ median: number; runs: number[] }> {
  const runs: number[] = [];
  for (let i = 0; i < times; i++) {
    await rig.quiet();
    const r = await rig.run({ url: rig.urls.noshed, body: rig.body, rate: Math.round(rate), seconds, settleSeconds: 0.5, connections: 1000, lateAfterMs: rig.tmax + 10 });
    await rig.drained("noshed");
    runs.push(r.ranInTime / seconds);
  }
  const sorted = [...runs].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], runs };
}

/** What one variant of the row saw over all its rounds. */
export interface OverloadTotals {
  result: OverloadResult | undefined;
  /** Sheds the exchange counted, and of them those read and found too late to run. */
  shedCounted: number;
  shedTooLate: number;
  /** The admission rate after each round (the windows that cut it). */
  limits: string[];
  /** The admission rate (auctions/s; Infinity: none), and the loop's utilisation in %, sampled every 100 ms during the measured part of the rounds. */
  limitSamples: number[];
  utilisationSamples: number[];
  /** Main-thread CPU of the target over the measured rounds, µs. */
  threadCpu: number;
  /** Bidder calls per auction run in each round, and circuits opened in it. */
  calls: string[];
}

/** The overload rounds: `rate` offered to both variants in turns; totals per variant. */
export async function overloadRounds(rig: OverloadRig, rate: number, rounds: number, perRound: number, settle: number): Promise<Map<"exchange" | "noshed", OverloadTotals>> {
  const totals = new Map<"exchange" | "noshed", OverloadTotals>();
  for (const key of ["exchange", "noshed"] as const) totals.set(key, { result: undefined, shedCounted: 0, shedTooLate: 0, limits: [], limitSamples: [], utilisationSamples: [], threadCpu: 0, calls: [] });
  // Rounds take turns (with, without, with, …) so that a slow minute of the machine weighs on both alike.
  for (let round = 0; round < rounds; round++) {
    for (const key of ["exchange", "noshed"] as const) {
      const total = totals.get(key)!;
      await rig.quiet();
      const before = await rig.stats(key);
      const cpuBefore = await rig.threadCpu(key);
      let running = true;
      const running$ = rig.run({ url: rig.urls[key], body: rig.body, rate, seconds: perRound, settleSeconds: settle, connections: 1000, lateAfterMs: rig.tmax + 10 }).finally(() => (running = false));
      if (key === "exchange") {
        await new Promise((resolve) => setTimeout(resolve, settle * 1000));
        while (running) {
          const { admission } = await rig.stats(key);
          if (admission) {
            total.limitSamples.push(admission.rate ?? Infinity);
            total.utilisationSamples.push(Math.round(admission.utilisation * 100));
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      const r = await running$;
      await rig.drained(key);
      total.threadCpu += (await rig.threadCpu(key)) - cpuBefore;
      const after = await rig.stats(key);
      total.shedCounted += after.overloaded - before.overloaded;
      total.shedTooLate += after.overloadedTooLate - before.overloadedTooLate;
      const calls = callsPerAuction(before, after);
      total.calls.push(`${calls.perAuction.toFixed(2)} (${calls.opened})`);
      if (after.admission) total.limits.push(`${after.admission.rate ?? "none"} (${after.admission.cuts - (before.admission?.cuts ?? 0)})`);
      total.result = total.result === undefined ? r : addOverload(total.result, r);
    }
  }
  return totals;
}

/** Min, median and max of samples, as "a–b–c" ("-" without any). */
export function spread(samples: number[]): string {
  if (samples.length === 0) return "-";
  const sorted = [...samples].sort((a, b) => a - b);
  const shown = (n: number) => (n === Infinity ? "none" : String(n));
  return `${shown(sorted[0])}–${shown(sorted[Math.floor(sorted.length / 2)])}–${shown(sorted[sorted.length - 1])}`;
}
