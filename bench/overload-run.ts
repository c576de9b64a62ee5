/**
 * bench/auction.ts's overload row, run and printed (the measurements: overload-row.ts). Its three
 * targets each run in a process of their own, without circuit breakers: the exchange with load shedding (as `adxkit serve`),
 * the same without (the capacity search and the rounds without shedding) and the one that sheds
 * everything (what a shed costs). The capacity is measured before the rounds and again after:
 * where the two differ by more than a fifth, the machine's other work moved it meanwhile, and the
 * row's "vs capacity" says little (printed as such).
 */
import type { ChildProcess } from "node:child_process";
import { cpuOf, noticesDrained, quiet, startChild, statsOf } from "./bench-children.js";
import type { OverloadResult } from "./open-loop.js";
import { checkCapacity, measureCapacity, overloadRounds, shedCost, spread, type OverloadRig } from "./overload-row.js";
import { printTable } from "./table.js";

export interface OverloadRowOptions {
  /** bench/auction.ts (forked with --target-child), the bidders' endpoints, its bidders' and load generator's processes. */
  script: string;
  endpoints: string[];
  bidderProcess: ChildProcess;
  loadProcess: ChildProcess;
  body: string;
  tmax: number;
  /** The closed-loop banner rate, where the capacity search starts (1,000 without). */
  closedLoopRate: number | undefined;
  /** Measured seconds of all rounds, rounds, settling seconds a round, the offer (0: twice the capacity), seconds a capacity step. */
  seconds: number;
  rounds: number;
  settleSeconds: number;
  rate: number;
  capacitySeconds: number;
}

type Key = "exchange" | "noshed" | "shedall";

export async function runOverloadRow(o: OverloadRowOptions): Promise<void> {
  const targets = new Map<Key, { child: ChildProcess; url: string }>();
  try {
    for (const key of ["exchange", "noshed", "shedall"] as const) {
      // Without circuit breakers: the row counts auctions that call their bidders. With circuits open (the
      // exchange's own lag times bidders out) an overloaded exchange answers no-bids at once: 2026-11-27
      // 16:25, the search's "peak" was 7,786/s in time at 0.00 bidder calls an auction (closed loop 2,700/s).
      const { child, message } = await startChild(o.script, ["--target-child", JSON.stringify(o.endpoints), JSON.stringify([key])], false, { ADXKIT_BENCH_NO_BREAKER: "1" });
      targets.set(key, { child, url: `${message[key]}/openrtb2/auction` });
    }
    const process$ = (key: Key) => targets.get(key)!.child;
    const waits = { total: 0, notQuiet: 0 };
    const all = [...[...targets.values()].map((t) => t.child), o.bidderProcess, o.loadProcess];
    const rig: OverloadRig = {
      run: (run) => {
        o.loadProcess.send({ run });
        return new Promise((resolve) => {
          const listener = (m: { result?: OverloadResult }) => {
            if (m.result === undefined) return;
            o.loadProcess.off("message", listener);
            resolve(m.result);
          };
          o.loadProcess.on("message", listener);
        });
      },
      stats: (key) => statsOf(process$(key), key),
      drained: (key) => noticesDrained(process$(key), key),
      threadCpu: async (key) => (await cpuOf(process$(key))).thread,
      quiet: async () => {
        const waited = await quiet(all);
        waits.total += waited;
        if (waited >= 10_000) waits.notQuiet++;
      },
      urls: { exchange: targets.get("exchange")!.url, noshed: targets.get("noshed")!.url, shedall: targets.get("shedall")!.url },
      body: o.body,
      tmax: o.tmax,
    };
    // Fresh processes: a second each at a low rate, so that the JIT has compiled their paths before anything is measured.
    for (const key of ["exchange", "noshed", "shedall"] as const) await rig.run({ url: rig.urls[key], body: o.body, rate: 200, seconds: 1, settleSeconds: 0, connections: 100, lateAfterMs: o.tmax + 10 });

    const from = o.closedLoopRate ?? 1000;
    const found = await measureCapacity(rig, from, o.capacitySeconds);
    printTable(
      `Capacity: banner offered open loop to the exchange without load shedding, ${o.capacitySeconds} s a step, rising by a quarter while a step answers more in time; its peak = the most auctions answered in time a second`,
      [["offered req/s", "answered in time /s", "late", "of requests", "target main thread µs/auction", "bidder calls/auction (circuits opened)"], ...found.steps.map((s) => [String(s.offered), s.inTime.toFixed(0), String(s.late), String(s.requests), s.threadPerAuction.toFixed(0), `${s.calls.perAuction.toFixed(2)} (${s.calls.opened})`])],
    );
    // No step in time (a very busy machine): the closed-loop rate stands in, and says so.
    const capacity = found.capacity > 0 ? found.capacity : from;
    // The machine's state before the rounds and after: 90 % of the capacity offered (at the peak step's
    // own offer, with no slack, one stall of another process tipped the exchange into a queue it
    // never drained: 801, 261 and 0/s in time at 1,188 offered, 2026-11-27 04:57).
    const checkRate = Math.round(0.9 * capacity);
    const before = await checkCapacity(rig, checkRate, o.capacitySeconds);
    process.stdout.write(
      (found.capacity > 0
        ? `capacity: ${capacity.toFixed(0)} auctions/s answered in time (the peak step, ${found.offered}/s offered)\n`
        : `capacity: no step answered half its offer in time; the closed-loop rate ${from} stands in\n`) +
        `check before the rounds: ${before.runs.map((r) => r.toFixed(0)).join(", ")} auctions/s in time at ${checkRate} offered\n`,
    );
    const rate = o.rate > 0 ? o.rate : Math.round(2 * capacity);
    // What a shed costs against an auction decides how much of the capacity can still run when twice it is offered.
    const shedMicros = await shedCost(rig, capacity, o.capacitySeconds);
    const r = shedMicros / found.threadPerAuction;
    process.stdout.write(
      `a shed costs the target's main thread ${shedMicros.toFixed(0)} µs (${capacity.toFixed(0)}/s offered, all shed), an auction ${found.threadPerAuction.toFixed(0)} µs (at capacity): ` +
        `where that thread is the limit, answering every request, at most ${(Math.max(0, (1 - (rate / capacity) * r) / (1 - r)) * 100).toFixed(0)} % of the capacity can run at ${rate}/s\n`,
    );
    const totals = await overloadRounds(rig, rate, o.rounds, o.seconds / o.rounds, o.settleSeconds);
    const after = await checkCapacity(rig, checkRate, o.capacitySeconds);
    // Under 80 % of the capacity in time at 90 % of it offered: the machine's other work took the cores meanwhile.
    const busy = [before, after].some((c) => c.median < 0.8 * capacity);
    process.stdout.write(
      `check after the rounds: ${after.runs.map((x) => x.toFixed(0)).join(", ")} auctions/s in time at ${checkRate} offered` +
        (busy ? `; a median under 80 % of the capacity (before or after): the machine's other work moved it, "vs capacity" is not to be trusted\n` : "\n") +
        `waited for the bench's processes to be quiet before each run: ${(waits.total / 1000).toFixed(1)} s in all; ${waits.notQuiet} times still busy after 10 s\n`,
    );
    const rows = [["target", "offered req/s", "requests", "answered", `late > tmax+10 (${o.tmax + 10} ms)`, "run and answered in time /s", "vs capacity", "shed (204 at once)", "of them too late to run", "of the late: shed", "errors", "load gen: sent > 10 ms late", "of the late: sent late", "its worst lag ms", "its CPU µs/req", "target main thread µs/req", "settling: late of answered", "admission rate at the end (cuts)", "rate while measured min–median–max", "loop utilisation % while measured", "bidder calls/auction run per round (circuits opened)"]];
    const names = { exchange: "exchange (load shedding, as serve)", noshed: "exchange without load shedding" };
    for (const [key, { shedCounted, shedTooLate, result: x, limits, limitSamples, utilisationSamples, threadCpu, calls }] of totals) {
      if (x === undefined) continue;
      const inTimeRate = x.ranInTime / o.seconds;
      rows.push([
        names[key], String(x.offered), String(x.requests), String(x.answered), String(x.late), inTimeRate.toFixed(0), `${((inTimeRate / capacity) * 100).toFixed(0)}%`, String(shedCounted), String(shedTooLate), String(x.lateShed), String(x.errors),
        String(x.sentLate), String(x.lateSentLate), x.sendLagMax.toFixed(0), (x.cpuMicros / (x.requests + x.settling.answered)).toFixed(0), (threadCpu / (x.answered + x.settling.answered)).toFixed(0), `${x.settling.late} of ${x.settling.answered}`, limits.join(", ") || "-", spread(limitSamples), spread(utilisationSamples), calls.join(", "),
      ]);
    }
    printTable(
      `Overload: ${rate} req/s offered (twice the capacity above, ${capacity.toFixed(0)} auctions a second, unless --overload-rate) for ${o.seconds} s measured, in ${o.rounds} alternating rounds each after ${o.settleSeconds} s of settling; goal 0 late, run in time ≥ 90 % of the capacity`,
      rows,
    );
  } finally {
    for (const { child } of targets.values()) child.disconnect();
  }
}
