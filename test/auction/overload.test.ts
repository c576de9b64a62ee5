// The loop-lag probe on an injected clock: on-time ticks read no wait, a late tick reads its
// lateness until the next tick, and an overdue tick counts before it runs; how far the loop is
// behind right now (what sheds a request unread) is only the overdue part.
import { describe, expect, it } from "vitest";
import { LoopLagProbe } from "../../service/auction/overload.js";
import { manualLagClock } from "./helpers.js";

function fakeClock() {
  const time = manualLagClock();
  return {
    clock: time.clock,
    /** Time passes; the probe's tick runs at the end of it (late when `ms` is above its interval). */
    run(ms: number) {
      time.set(time.now() + ms);
      time.tick();
    },
    advance(ms: number) {
      time.set(time.now() + ms);
    },
    stopped: time.stopped,
  };
}

describe("LoopLagProbe", () => {
  it("reads no wait while ticks run on time", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    for (let i = 0; i < 10; i++) t.run(5);
    expect(probe.waitedMs()).toBe(0);
  });

  it("reads a late tick's lateness, until the next tick runs on time", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    t.run(85); // the loop was busy for 80 ms beyond the interval
    expect(probe.waitedMs()).toBe(80);
    t.run(5);
    expect(probe.waitedMs()).toBe(0);
  });

  it("counts a tick that is overdue right now, before it runs", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    t.run(5);
    t.advance(65); // the loop is stuck: the probe cannot run, a request handled now still sees it
    expect(probe.waitedMs()).toBe(60);
  });

  it("follows the loop while it stays saturated: each turn's wait, not a peak kept from earlier", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    const seen: number[] = [];
    for (const busy of [40, 60, 45, 50]) {
      t.run(5 + busy);
      seen.push(probe.waitedMs());
    }
    expect(seen).toEqual([40, 60, 45, 50]);
    probe.stop();
    expect(t.stopped()).toBe(true);
  });

  it("reads how far the loop is behind now from the overdue tick only, not from the last tick's lateness", () => {
    const t = fakeClock();
    const probe = new LoopLagProbe({ intervalMs: 5, clock: t.clock });
    t.run(85); // the last turn ran 80 ms late; this one has just begun
    expect([probe.waitedMs(), probe.behindMs()]).toEqual([80, 0]);
    t.advance(30); // this turn has kept the tick waiting 25 ms past its time
    expect([probe.waitedMs(), probe.behindMs()]).toEqual([80, 25]);
    t.run(0);
    expect([probe.waitedMs(), probe.behindMs()]).toEqual([25, 0]);
  });
});
