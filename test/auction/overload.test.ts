// The loop-lag probe on an injected clock: on-time ticks read no wait, a late tick reads its
// lateness until the next tick, and an overdue tick counts before it runs; how far the loop is
// behind right now (what sheds a request unread) is only the overdue part.
import { describe, expect, it } from "vitest";
import { AdmissionRate, LoopLagProbe } from "../../service/auction/overload.js";
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

// The admission rate, driven by handed-in measurements (an injected clock and busy time, and its
// ticks called by the test): what it admits, when a window cuts it (the loop busier than the target,
// or behind throughout, not one late turn), when one raises it or lifts it.
describe("AdmissionRate", () => {
  const rules = { windowMs: 100, lagMs: 20, targetUtilisation: 0.8, decrease: 0.5, increase: 1.5, burstMs: 100, inFlightMin: 2, initialRate: Infinity };
  function rig(overrides: Partial<typeof rules> = {}) {
    const time = manualLagClock(0);
    const rate = new AdmissionRate({ ...rules, ...overrides }, time.clock);
    return {
      rate,
      /** `n` admissions now; how many were admitted. */
      admit: (n: number) => Array.from({ length: n }, () => rate.admit()).filter(Boolean).length,
      /** Time passes by `ms`, the loop busy `busy` of it; the probe ticks every 5 ms, `lateMs` late each. */
      run(ms: number, busy: number, lateMs = 0) {
        for (let t = 5; t <= ms; t += 5) {
          time.set(time.now() + 5);
          time.busy((busy * 5) / ms);
          rate.tick(time.now(), lateMs);
        }
      },
    };
  }

  it("has no rate until a window is overloaded: everything is admitted", () => {
    const r = rig();
    expect(r.admit(500)).toBe(500);
    r.run(100, 70); // busy 70 %, under the target of 80 %
    expect(r.admit(500)).toBe(500);
    expect(r.rate.snapshot()).toMatchObject({ rate: null, inFlight: 1000, cuts: 0 });
  });

  it("a window busier than the target cuts the rate to what it admitted times target / busy share; the bucket then holds to it", () => {
    const r = rig();
    r.admit(50); // 50 in a window of 100 ms: 500 a second
    r.run(100, 100);
    expect(r.rate.snapshot()).toMatchObject({ rate: 400, cuts: 1, utilisation: 1 }); // 500 × 0.8 / 1
    // 100 ms later the bucket holds 40 (its cap: burst-ms of the rate): 40 more admitted, the rest shed.
    r.run(100, 80);
    expect(r.admit(50)).toBe(40);
    r.run(10, 8);
    expect(r.admit(10)).toBe(4);
  });

  it("a cut is at most decrease: a loop busy throughout a window that admitted little", () => {
    const r = rig({ targetUtilisation: 0.2 });
    r.admit(50);
    r.run(100, 100); // 0.2 / 1 would be a fifth; decrease is half
    expect(r.rate.snapshot().rate).toBe(250);
  });

  it("a busy window whose every tick ran more than lag-ms late cuts it by decrease (a queue to drain); behind while the loop idled, or one late turn, cuts nothing", () => {
    const r = rig();
    r.admit(50);
    r.run(100, 30, 25); // every tick 25 ms late, the loop busy 30 %: it waited for a core, not for its own work
    expect(r.rate.snapshot()).toMatchObject({ rate: null, cuts: 0, lagMs: 25 });
    r.admit(50);
    r.run(95, 90, 0);
    r.run(5, 0, 100); // one turn 100 ms late in a busy window on time otherwise: the busy share decides
    expect(r.rate.snapshot()).toMatchObject({ rate: 444, cuts: 1 }); // 500 × 0.8 / 0.9
    r.run(50, 50, 25);
    expect(r.admit(1000)).toBe(22); // 50 ms of 444 a second in the bucket
    r.run(50, 50, 25); // busy throughout, every tick late: 220 a second admitted, halved (decrease), not × 0.8
    expect(r.rate.snapshot()).toMatchObject({ rate: 110, cuts: 2, lagMs: 25 });
  });

  it("while fewer than in-flight-min are in flight a request is admitted whatever the bucket holds", () => {
    const r = rig();
    r.admit(50);
    r.run(100, 100);
    r.admit(1000); // empties the bucket; 48 answer, 2 stay in flight
    for (let i = 0; i < 48; i++) r.rate.done();
    expect(r.rate.snapshot().inFlight).toBe(2);
    expect(r.admit(1)).toBe(0);
    r.rate.done();
    expect(r.admit(3)).toBe(1); // one place under the minimum, then the bucket is still empty
  });

  it("a window that shed and kept under its target raises the rate by up to increase; a window that shed nothing, with little admitted and the loop idle, lifts it", () => {
    const r = rig();
    r.admit(50);
    r.run(100, 100); // 400 a second
    r.admit(1000); // sheds
    r.run(100, 60); // 0.8 / 0.6: up by a third
    expect(r.rate.snapshot().rate).toBe(533);
    r.admit(1000);
    r.run(100, 20); // 0.8 / 0.2 = 4: up by increase only
    expect(r.rate.snapshot().rate).toBe(800);
    r.run(100, 50); // nothing shed, busy over half the target: the rate stays
    expect(r.rate.snapshot().rate).toBe(800);
    r.admit(50);
    r.run(100, 30); // nothing shed, under half the target, but 500 a second admitted: over half the rate, it stays
    expect(r.rate.snapshot().rate).toBe(800);
    r.run(100, 30); // nothing shed, under half the target and half the rate: no rate
    expect(r.rate.snapshot()).toMatchObject({ rate: null, cuts: 1 });
    expect(r.admit(2000)).toBe(2000);
  });

  it("a rate of 0, no minimum in flight and a target of 0 shed everything for good (the bench's measure of a shed's cost)", () => {
    const r = rig({ initialRate: 0, inFlightMin: 0, targetUtilisation: 0 });
    expect(r.admit(10)).toBe(0);
    r.run(500, 0); // idle windows: under half a target of 0 never
    expect(r.admit(10)).toBe(0);
    r.run(500, 400);
    expect(r.admit(10)).toBe(0);
    expect(r.rate.snapshot().rate).toBe(0);
  });
});
