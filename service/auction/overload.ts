/**
 * Load shedding (x-adxkit-auction overload): the event loop's lag, and the admission limit below.
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
 * right now, i.e. how far the current turn has run past its time. The larger is the wait (the
 * auction's clock starts that much earlier, counted once in whether it is too late to run) and,
 * again, the slip of its bidders' timers (their budget, never below shed-below-ms); what is
 * admitted at all is the admission limit's decision.
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

/**
 * Admission control (x-adxkit-auction overload, admission-*): a limit on the auctions in flight
 * (admitted, not yet answered). A request over it is answered 204 `overloaded` before its body is
 * read. The limit is judged a window at a time, a window being as many answers as the limit, of
 * auctions admitted since it last changed: when more than admission-late-share of them spent more
 * than admission-target-fraction of their tmax on their own (from when they arrived, so the loop's
 * lag is in it, less the wait for their bidders: a slow bidder is not load), it is multiplied by admission-decrease; when a whole window came with no
 * more late than that and the limit bound (at least half of it in use), by admission-increase: it
 * settles where about admission-late-share of the auctions spend admission-target-fraction of tmax on their own. Why a limit and not a
 * lag threshold: in flight = throughput × time to answer, so a limit bounds the time an admitted
 * auction takes (its work, and the wait of the requests read behind it) before the loop falls
 * behind; a lag threshold trips only once the auctions already admitted are late. Why a share of
 * a window: on a shared machine one auction in a hundred is late for reasons of its own (another
 * process held the core), and cutting on each cut the limit far below what the exchange can hold.
 */
export interface AdmissionOptions {
  /** The limit at start (admission-limit-initial). */
  initial?: number;
  /** The limit never goes below this (admission-limit-min): with fewer in flight, a slow answer is a stall of the machine, not load. */
  min?: number;
  /** An auction that spent more than this fraction of its tmax on its own (bidders' wait excluded) is late (admission-target-fraction). */
  targetFraction?: number;
  /** More than this share of a window late cuts the limit (admission-late-share). */
  lateShare?: number;
  /** What a cut multiplies the limit by (admission-decrease). */
  decrease?: number;
  /** What a window with no more than the late share late multiplies the limit by, if it bound (admission-increase; at least +1). */
  increase?: number;
}

/** One admitted auction, handed back to `AdmissionLimit.done` when its answer has left. */
export interface AdmissionTicket {
  /** Its place in the order of admissions. */
  readonly seq: number;
  /** When it arrived (performance.now() scale, the loop's lag taken off). */
  readonly startedAt: number;
  /** Its tmax once its body is read (the default until then). */
  tmaxMs: number;
  /**
   * How long it waited for its bidders (at most their budget): not the exchange's own time, so not
   * counted towards lateness. Without it, bidders that answer near their deadline (normal for
   * DSPs across a network) or one slow bidder would cut the limit on an idle exchange.
   */
  biddersMs?: number;
  /** Set when it waited too long unseen to be run (shed-below-ms): late, however soon it answers. */
  tooLate?: boolean;
}

/** What `AdmissionLimit` reports (stats().admission, /metrics). */
export interface AdmissionSnapshot {
  limit: number;
  inFlight: number;
  /** Times the limit was cut. */
  cuts: number;
}

/** The adaptive limit on auctions in flight; its measurements are handed in, so it reads no clock. */
export class AdmissionLimit {
  private limitValue: number;
  private readonly rules: Required<AdmissionOptions>;
  private inFlight = 0;
  private admissions = 0;
  /** Auctions admitted up to this one were admitted under an earlier limit: their answers judge nothing. */
  private changedAt = 0;
  private window = { answers: 0, late: 0, bound: false };
  private cuts = 0;

  constructor(rules: Required<AdmissionOptions>) {
    this.rules = rules;
    this.limitValue = Math.max(rules.min, rules.initial);
  }

  /** A ticket when one more auction fits in the limit, else undefined (shed it). */
  admit(startedAt: number, tmaxMs: number): AdmissionTicket | undefined {
    if (this.inFlight >= Math.floor(this.limitValue)) return undefined;
    this.inFlight++;
    if (2 * this.inFlight >= this.limitValue) this.window.bound = true;
    return { seq: ++this.admissions, startedAt, tmaxMs };
  }

  /** An admitted auction's answer left `elapsedMs` after it arrived: count it in the window (its bidders' wait taken off), judge the window when full. */
  done(ticket: AdmissionTicket, elapsedMs: number): void {
    this.inFlight--;
    if (ticket.seq <= this.changedAt) return;
    const window = this.window;
    window.answers++;
    if (ticket.tooLate === true || elapsedMs - (ticket.biddersMs ?? 0) > this.rules.targetFraction * ticket.tmaxMs) window.late++;
    const size = Math.floor(this.limitValue);
    if (window.late > this.rules.lateShare * size) {
      this.change(Math.max(this.rules.min, this.limitValue * this.rules.decrease));
      this.cuts++;
    } else if (window.answers >= size) {
      if (window.bound) this.change(Math.max(this.limitValue + 1, this.limitValue * this.rules.increase));
      else this.change(this.limitValue);
    }
  }

  private change(limit: number): void {
    this.limitValue = limit;
    this.changedAt = this.admissions;
    this.window = { answers: 0, late: 0, bound: 2 * this.inFlight >= limit };
  }

  snapshot(): AdmissionSnapshot {
    return { limit: Math.floor(this.limitValue), inFlight: this.inFlight, cuts: this.cuts };
  }
}
