/**
 * How long a request waited before the exchange saw it. The exchange's clock starts when Fastify
 * hands it a request, but an overloaded process reads its sockets late: the bytes wait in the
 * kernel while the event loop answers other auctions, and that time is invisible from inside the
 * request. It is about the event loop's own lag, which a timer measures: it asks to run every
 * `intervalMs` and records how late it ran. Timers run before the sockets are read in each turn
 * of the loop, so the requests read in a turn have waited about as long as that turn's tick was
 * late (or as the tick is overdue now, when it has not run yet).
 *
 * The last tick's lateness, not a peak kept over time: on a machine whose other processes take
 * the cores now and then, a kept peak would shed auctions that had not waited.
 *
 * An auction whose budget, less that wait, cannot hold the bidders' minimum is not run: it is
 * answered 204 at once (counted `overloaded`), because an answer after its deadline is thrown away
 * by the caller and only takes time from the auctions that can still make theirs.
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

  /** Milliseconds a request arriving now is likely to have waited unseen. */
  waitedMs(): number {
    // A tick that is overdue right now is lag too, seen before the timer gets to run.
    const overdue = Math.max(0, this.clock.now() - this.last - this.intervalMs);
    return Math.max(this.lastLateness, overdue);
  }

  stop(): void {
    this.timer.stop();
  }
}
