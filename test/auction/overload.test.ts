// The loop-lag probe on an injected clock: on-time ticks read no wait, a late tick reads its
// lateness, an overdue tick counts before it runs, and the estimate falls back as the loop keeps up.
import { describe, expect, it } from "vitest";
import { LoopLagProbe, type LagClock } from "../../service/auction/overload.js";

function fakeClock() {
  let now = 1_000;
  let tick: (() => void) | undefined;
  const clock: LagClock = {
    now: () => now,
    every(_ms, fn) {
      tick = fn;
      return { stop: () => (tick = undefined) };
    },
  };
  return {
    clock,
    /** Time passes; the probe's tick runs at the end of it (late when `ms` is above its interval). */
    run(ms: number) {
      now += ms;
      tick?.();
    },
    advance(ms: number) {
      now += ms;
    },
    stopped: () => tick === undefined,
  };
}

describe("LoopLagProbe", () => {
  it("reads no wait while ticks run on time", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    for (let i = 0; i < 10; i++) t.run(5);
    expect(probe.waitedMs()).toBe(0);
  });

  it("reads a late tick's lateness, then halves it per on-time tick", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    t.run(85); // the loop was busy for 80 ms beyond the interval
    expect(probe.waitedMs()).toBe(80);
    t.run(5);
    expect(probe.waitedMs()).toBe(40);
    t.run(5);
    t.run(5);
    expect(probe.waitedMs()).toBe(10);
  });

  it("counts a tick that is overdue right now, before it runs", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    t.run(5);
    t.advance(65); // the loop is stuck: the probe cannot run, a request handled now still sees it
    expect(probe.waitedMs()).toBe(60);
  });

  it("keeps the worst lateness while the loop stays saturated", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    for (const busy of [40, 60, 45, 50]) t.run(5 + busy);
    expect(probe.waitedMs()).toBe(50); // max(50, 60 × 0.5 × … ): the latest level, not a stale peak
    probe.stop();
    expect(t.stopped()).toBe(true);
  });
});
