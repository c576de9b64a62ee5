// The loop-lag probe on an injected clock: on-time ticks read no wait, a late tick reads its
// lateness until the next tick, and an overdue tick counts before it runs; how far the loop is
// behind right now (what sheds a request unread) is only the overdue part.
import { describe, expect, it } from "vitest";
import { AdmissionLimit, LoopLagProbe } from "../../service/auction/overload.js";
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

// The admission limit, driven by handed-in measurements (it reads no clock): what it admits,
// when late answers cut it (a share of a window, not one outlier), when a window in time raises it.
describe("AdmissionLimit", () => {
  const rules = { initial: 20, min: 4, targetFraction: 0.5, lateShare: 0.1, decrease: 0.5, increase: 1.5 };
  const TMAX = 100; // late: answered after 50 ms
  const fill = (limit: AdmissionLimit, n: number) => Array.from({ length: n }, () => limit.admit(0, TMAX));
  /** Keeps the limit full, each answer's place taken at once; `elapsed(i)` is the i-th answer's time. Returns the auctions still in flight. */
  const saturate = (limit: AdmissionLimit, answers: number, elapsed: (i: number) => number) => {
    const inFlight = fill(limit, limit.snapshot().limit).filter((t) => t !== undefined);
    for (let i = 0; i < answers; i++) {
      limit.done(inFlight.shift()!, elapsed(i));
      for (let t = limit.admit(0, TMAX); t !== undefined; t = limit.admit(0, TMAX)) inFlight.push(t);
    }
    return inFlight;
  };

  it("admits up to its limit, refuses the next, and admits again once one answers", () => {
    const limit = new AdmissionLimit(rules);
    const tickets = fill(limit, 20);
    expect(tickets.every((t) => t !== undefined)).toBe(true);
    expect(limit.admit(0, TMAX)).toBeUndefined();
    limit.done(tickets[0]!, 10);
    expect(limit.admit(0, TMAX)).toBeDefined();
    expect(limit.snapshot().inFlight).toBe(20);
  });

  it("more than late-share of a window late cuts it at once; one late answer in a window does not", () => {
    const limit = new AdmissionLimit(rules);
    const tickets = fill(limit, 20);
    limit.done(tickets[0]!, 51);
    limit.done(tickets[1]!, 51);
    expect(limit.snapshot().cuts).toBe(0); // 2 of 20: not more than a tenth
    limit.done(tickets[2]!, 51);
    expect(limit.snapshot()).toMatchObject({ limit: 10, cuts: 1 });
    // The others were admitted under the old limit: their lateness judges nothing.
    for (const ticket of tickets.slice(3)) limit.done(ticket!, 80);
    expect(limit.snapshot()).toMatchObject({ limit: 10, cuts: 1, inFlight: 0 });
  });

  it("measures against each auction's own tmax", () => {
    const limit = new AdmissionLimit({ ...rules, lateShare: 0 });
    const ticket = limit.admit(0, TMAX)!;
    ticket.tmaxMs = 200; // its body said tmax 200: 80 ms is in time
    limit.done(ticket, 80);
    expect(limit.snapshot().cuts).toBe(0);
    limit.done(limit.admit(0, TMAX)!, 80);
    expect(limit.snapshot().cuts).toBe(1);
  });

  it("the time an auction waited for its bidders is not its own: only the rest counts towards lateness", () => {
    const limit = new AdmissionLimit({ ...rules, lateShare: 0 });
    const waited = limit.admit(0, TMAX)!;
    waited.biddersMs = 45; // 80 ms in all, 35 of them the exchange's own: in time
    limit.done(waited, 80);
    expect(limit.snapshot().cuts).toBe(0);
    const own = limit.admit(0, TMAX)!;
    own.biddersMs = 25; // 80 ms in all, 55 of them its own: late
    limit.done(own, 80);
    expect(limit.snapshot().cuts).toBe(1);
  });

  it("an auction that waited too long unseen to be run counts late, however soon its 204 left", () => {
    const limit = new AdmissionLimit({ ...rules, lateShare: 0 });
    const ticket = limit.admit(0, TMAX)!;
    ticket.tooLate = true;
    limit.done(ticket, 1);
    expect(limit.snapshot()).toMatchObject({ limit: 10, cuts: 1 });
  });

  it("while everything is late it is cut window after window, never below its minimum", () => {
    const limit = new AdmissionLimit(rules);
    for (const ticket of saturate(limit, 200, () => 1000)) limit.done(ticket, 1000);
    expect(limit.snapshot()).toMatchObject({ limit: 4, inFlight: 0 });
    expect(fill(limit, 5).filter((t) => t !== undefined)).toHaveLength(4);
  });

  it("a whole window in time raises it while it binds, and not while it idles", () => {
    const limit = new AdmissionLimit(rules);
    // Two in flight at a time, all in time: far below the limit, which stays.
    for (let i = 0; i < 100; i++) {
      const [a, b] = fill(limit, 2);
      limit.done(a!, 10);
      limit.done(b!, 10);
    }
    expect(limit.snapshot().limit).toBe(20);
    // Kept full and answered in time: ×1.5 after the first window of 20; the next window is 30
    // answers of auctions admitted since, of which 6 have come.
    saturate(limit, 45, () => 10);
    expect(limit.snapshot()).toMatchObject({ limit: 30, cuts: 0 });
  });

  it("a window with a late answer or two, under the share, raises it too; one over the share cuts it", () => {
    const limit = new AdmissionLimit(rules);
    saturate(limit, 45, (i) => (i % 10 === 0 ? 80 : 10));
    expect(limit.snapshot()).toMatchObject({ limit: 30, cuts: 0 });
    const cut = new AdmissionLimit(rules);
    saturate(cut, 45, (i) => (i % 5 === 0 ? 80 : 10));
    expect(cut.snapshot()).toMatchObject({ limit: 5, cuts: 2 }); // 20 → 10 → 5: a fifth late in each window
  });

  it("starts no lower than its minimum", () => {
    expect(new AdmissionLimit({ ...rules, initial: 1 }).snapshot().limit).toBe(4);
  });
});
