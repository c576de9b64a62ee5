/**
 * The event loop's lag, which decides load shedding (x-adxkit-auction overload, shed-lag-ms).
 * The exchange's clock starts when Fastify hands it a request, but an overloaded process reads
 * its sockets late: the bytes wait in the kernel while the loop answers other auctions, and
 * that time is invisible from inside the request. A timer measures it: it asks to run every
 * `intervalMs` and records how late it ran. Timers run before the sockets are read in each turn
 * of the loop, so the requests read in a turn have waited about as long as that turn's tick was
 * late (or as the tick is overdue now, when it has not run yet).
 *
 * Two readings: `waitedMs`, the wait a request read now has had (the last tick's lateness, not a
 * peak kept over time: on a machine whose other processes take the cores now and then, a kept
 * peak would shed auctions that had not waited); and `behindMs`, how long the tick is overdue
 * right now, i.e. how far the current turn has run past its time. A request read once the turn
 * is shed-lag-ms behind is shed before its body is read: the auctions already admitted in the
 * turn fill it, and each more would push them all, and itself, past their deadlines.
 */

/** The clock and timer the probe uses (injected in tests). */
export interface LagClock {
  now(): number;
  every(ms: number, tick: () => void): { stop(): void };
}

const realClock: LagClock = {
  now: () => performance.now(),
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
};

/** Options of the probe (ExchangeOptions.loadShedding). */
export interface LagProbeOptions {
  /** How often the probe asks to run (default 5 ms). */
  intervalMs?: number;
  clock?: LagClock;
}

/** Estimates the time a request that arrives now waits before its callback runs. */
export class LoopLagProbe {
  private readonly intervalMs: number;
  private readonly clock: LagClock;
  private readonly timer: { stop(): void };
  private last: number;
  private lastLateness = 0;

  constructor(options: LagProbeOptions = {}) {
    this.intervalMs = options.intervalMs ?? 5;
    this.clock = options.clock ?? realClock;
    this.last = this.clock.now();
    this.timer = this.clock.every(this.intervalMs, () => this.tick());
  }

  private tick(): void {
    const now = this.clock.now();
    this.lastLateness = Math.max(0, now - this.last - this.intervalMs);
    this.last = now;
  }

  /** Milliseconds a request arriving now is likely to have waited unseen (also how late a timer set now will run). */
  waitedMs(): number {
    // A tick that is overdue right now is lag too, seen before the timer gets to run.
    return Math.max(this.lastLateness, this.behindMs());
  }

  /** Milliseconds the loop is behind right now: how long its tick is overdue (0 while on time). */
  behindMs(): number {
    return Math.max(0, this.clock.now() - this.last - this.intervalMs);
  }

  stop(): void {
    this.timer.stop();
  }
}
