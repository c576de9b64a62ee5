// The loop-lag probe on an injected clock: on-time ticks read no wait, a late tick reads its
// lateness until the next tick, and an overdue tick counts before it runs; how far the loop is
// behind right now (what sheds a request unread) is only the overdue part.
import { describe, expect, it } from "vitest";
import { AdmissionRate, LoopLagProbe } from "../../service/auction/overload.js";
import { readFileSync } from "node:fs";
import { manualLagClock } from "./helpers.js";

/** A step of admission-windows.json (its "about" says what each field does). */
interface WindowStep {
  doneAll?: boolean;
  admitEach?: number;
  admit?: number;
  admitted?: number;
  run: [number, number, number?];
  expect?: Record<string, unknown>;
}
const windows: { rules: Record<string, number | null>; scenarios: { name: string; steps: WindowStep[] }[] } = JSON.parse(
  readFileSync(new URL("./admission-windows.json", import.meta.url), "utf8"),
);

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
// ticks called by the test): what it admits, when a window cuts it (a standing queue of the loop's
// own work, not a busy loop that keeps up, nor one late turn), when one raises it or lifts it.
describe("AdmissionRate", () => {
  const rules = { windowMs: 100, lagMs: 20, targetUtilisation: 0.8, decrease: 0.5, increase: 1.5, probeStep: 0.1, liftWindows: 3, burstMs: 100, inFlightMin: 2, initialRate: Infinity };
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

  it("a loop busy throughout without a standing queue sheds nothing, window after window (a closed loop of callers)", () => {
    const r = rig();
    for (let window = 0; window < 20; window++) {
      expect(r.admit(50)).toBe(50);
      for (let i = 0; i < 50; i++) r.rate.done(); // answered: their callers send the next ones
      r.run(100, 100, 5); // busy throughout, every turn long, but the loop catches up within 5 ms
    }
    expect(r.rate.snapshot()).toMatchObject({ rate: null, cuts: 0, utilisation: 1, lagMs: 5 });
  });

  it("a standing queue through two windows of a busy loop cuts the rate to what they admitted, less decrease; the bucket then holds to it", () => {
    const r = rig();
    r.admit(50);
    r.run(100, 100, 25); // one window behind throughout: it may be one long turn
    expect(r.rate.snapshot()).toMatchObject({ rate: null, cuts: 0 });
    r.admit(50);
    r.run(100, 100, 25); // a second: a queue that stands
    expect(r.rate.snapshot()).toMatchObject({ rate: 250, cuts: 1, utilisation: 1, lagMs: 25 }); // 100 in 200 ms, halved
    // 100 ms later the bucket holds 25 (its cap: burst-ms of the rate): 25 more admitted, the rest shed.
    r.run(100, 80);
    expect(r.admit(50)).toBe(25);
    r.run(10, 8);
    expect(r.admit(10)).toBe(2);
  });

  it("behind while the loop idled cuts nothing, nor a window whose loop caught up once", () => {
    const r = rig();
    r.admit(50);
    r.run(200, 60, 25); // every tick 25 ms late, the loop busy 30 %: it waited for a core, not for its own work
    expect(r.rate.snapshot()).toMatchObject({ rate: null, cuts: 0, lagMs: 25 });
    r.run(100, 100, 0);
    r.run(100, 100, 25);
    r.run(95, 95, 25);
    r.run(5, 5, 0); // busy throughout, one tick on time: the queue drained then
    expect(r.rate.snapshot()).toMatchObject({ rate: null, cuts: 0, lagMs: 0 });
  });

  it("while fewer than in-flight-min are in flight a request is admitted whatever the bucket holds", () => {
    const r = rig();
    r.admit(50);
    r.run(200, 200, 25);
    expect(r.admit(1000)).toBe(0); // the bucket is empty after the cut; 48 answer, 2 stay in flight
    for (let i = 0; i < 48; i++) r.rate.done();
    expect(r.rate.snapshot().inFlight).toBe(2);
    expect(r.admit(1)).toBe(0);
    r.rate.done();
    expect(r.admit(3)).toBe(1); // one place under the minimum, then the bucket is still empty
  });

  it("a window that shed and caught up within half lag-ms raises the rate by probe-step of the ceiling; nearer a queue it holds; lift-windows calm windows in a row lift it", () => {
    const r = rig();
    r.admit(50);
    r.run(200, 200, 25); // 250 a second admitted where the queue stood (the ceiling); the rate half that
    expect(r.rate.snapshot()).toMatchObject({ rate: 125, ceiling: 250, cuts: 1 });
    r.admit(1000); // sheds
    r.run(100, 100, 15); // no standing queue, but the loop is 15 ms behind at best: the rate holds
    expect(r.rate.snapshot()).toMatchObject({ rate: 125, cuts: 1 });
    r.admit(1000); // 12 admitted, the rest shed
    r.run(100, 100, 5);
    expect(r.rate.snapshot().rate).toBe(150); // 125 + 250 × 0.1, not 125 × 1.5
    r.run(100, 50); // nothing shed, busy over half the target: the rate stays
    expect(r.rate.snapshot().rate).toBe(150);
    r.run(200, 60); // two calm windows: nothing shed, under half the target and half the rate
    expect(r.rate.snapshot().rate).toBe(150);
    r.run(100, 30); // the third in a row: no rate
    expect(r.rate.snapshot()).toMatchObject({ rate: null, ceiling: null, cuts: 1 });
    expect(r.admit(2000)).toBe(2000);
  });

  // Data-driven (admission-windows.json): the cut's ceiling, the hold while its queue drains, the raises and the lift.
  for (const scenario of windows.scenarios) {
    it(scenario.name, () => {
      const r = rig({ ...(windows.rules as typeof rules), initialRate: windows.rules.initialRate ?? Infinity });
      scenario.steps.forEach((step, i) => {
        const at = `step ${i + 1}`;
        if (step.doneAll) for (let n = r.rate.snapshot().inFlight; n > 0; n--) r.rate.done();
        for (let n = 0; n < (step.admitEach ?? 0); n++) {
          expect(r.rate.admit(), at).toBe(true);
          r.rate.done();
        }
        const admitted = r.admit(step.admit ?? 0);
        if (step.admitted !== undefined) expect(admitted, at).toBe(step.admitted);
        r.run(step.run[0], step.run[1], step.run[2] ?? 0);
        if (step.expect !== undefined) expect(r.rate.snapshot(), at).toMatchObject(step.expect);
      });
    });
  }

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
