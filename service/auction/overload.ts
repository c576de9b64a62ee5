/**
 * Load shedding (x-adxkit-auction overload): the event loop's lag, and the admission rate below.
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
 * admitted at all is the admission rate's decision, judged on the probe's ticks.
 */
import { performance } from "node:perf_hooks";

/** The clock and timer the probe uses, and the loop's busy time (injected in tests). */
export interface LagClock {
  now(): number;
  every(ms: number, tick: () => void): { stop(): void };
  /** Milliseconds the event loop has spent running callbacks so far (not waiting for I/O). */
  busyMs(): number;
}

const realClock: LagClock = {
  now: () => performance.now(),
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
  // libuv's own count of the time outside its poll for I/O: reading it costs about a microsecond.
  busyMs: () => performance.eventLoopUtilization().active,
};

/** Options of the probe (ExchangeOptions.loadShedding). */
export interface LagProbeOptions {
  /** How often the probe asks to run (default 5 ms). */
  intervalMs?: number;
  clock?: LagClock;
}

/** Estimates the time a request that arrives now waits before its callback runs. */
export class LoopLagProbe {
  readonly clock: LagClock;
  private readonly intervalMs: number;
  private readonly timer: { stop(): void };
  private last: number;
  private lastLateness = 0;

  /** `onTick(now, lateMs)` after each tick (the admission rate's measurements). */
  constructor(options: LagProbeOptions = {}, private readonly onTick?: (now: number, lateMs: number) => void) {
    this.intervalMs = options.intervalMs ?? 5;
    this.clock = options.clock ?? realClock;
    this.last = this.clock.now();
    this.timer = this.clock.every(this.intervalMs, () => this.tick());
  }

  private tick(): void {
    const now = this.clock.now();
    this.lastLateness = Math.max(0, now - this.last - this.intervalMs);
    this.last = now;
    this.onTick?.(now, this.lastLateness);
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
 * Admission control (x-adxkit-auction overload, admission-*): a rate of auctions a second, kept
 * where the event loop keeps up. Why a rate and not a limit on the auctions in flight: an
 * auction's CPU is the loop's, but most of its time in flight is the wait for its bidders, whose
 * answers come later the busier the machine; in flight = throughput × latency, so a limit on it
 * does not bound the loop's work (the bench's overload row at 2× capacity, 2026-11-26 15:32: a
 * limit of 55-336 let the queued work reach ~80 ms, and even sheds answered late). A rate bounds
 * the loop's work per second directly: rate × an auction's CPU.
 *
 * It is judged a window (admission-window-ms) at a time, on the probe's ticks: the window is
 * overloaded when the loop was busy more than admission-target-utilisation of it. The rate then
 * becomes what was admitted in the window times target / utilisation, at most a cut to
 * admission-decrease of it, and that cut when every tick in the window also ran more than
 * admission-lag-ms late (a standing queue, not one long turn: it must drain). Lag alone cuts
 * nothing: with the loop idle part of the window, it waited for a core the machine's other
 * processes held, and shedding would make no room. A window that shed auctions and was not
 * overloaded raises the rate by up to admission-increase (target / utilisation again). Each request takes a token of a bucket
 * refilled at the rate, holding admission-burst-ms of it; with none left it is shed unread.
 * While fewer than admission-in-flight-min auctions are in flight a request is always admitted:
 * a few callers at a time (a closed loop) are not an overload, however busy the machine.
 * There is no rate until a window is overloaded, and none again after a window that shed nothing,
 * admitted less than half the rate and kept the loop under half its target.
 */
export interface AdmissionOptions {
  /** The window, ms (admission-window-ms). */
  windowMs?: number;
  /** A window whose every tick ran later than this is overloaded (admission-lag-ms). */
  lagMs?: number;
  /** A window busier than this share of its time is overloaded (admission-target-utilisation). */
  targetUtilisation?: number;
  /** The smallest factor of a cut, and of a cut for lag (admission-decrease). */
  decrease?: number;
  /** The largest factor of a raise (admission-increase). */
  increase?: number;
  /** The bucket holds this many milliseconds of the rate (admission-burst-ms). */
  burstMs?: number;
  /** Always admitted while fewer than this are in flight (admission-in-flight-min). */
  inFlightMin?: number;
  /** The rate at start, auctions a second (not a rule: Infinity, none; the bench's shed-everything exchange has 0). */
  initialRate?: number;
}

/** What `AdmissionRate` reports (stats().admission, /metrics). */
export interface AdmissionSnapshot {
  /** Auctions a second admitted, or null while there is no rate (the loop keeps up). */
  rate: number | null;
  inFlight: number;
  /** Windows that cut the rate. */
  cuts: number;
  /** The last window's busy share of the loop, and its smallest tick lateness, ms. */
  utilisation: number;
  lagMs: number;
}

/** The admission rate; it reads the clock handed in (the probe's), and is told of each tick. */
export class AdmissionRate {
  private readonly rules: Required<AdmissionOptions>;
  private rate: number;
  private tokens = 0;
  private filledAt: number;
  private inFlight = 0;
  private cuts = 0;
  private window: { from: number; busyFrom: number; admitted: number; shed: number; minLate: number };
  private last = { utilisation: 0, lagMs: 0 };

  constructor(rules: Required<AdmissionOptions>, private readonly clock: Pick<LagClock, "now" | "busyMs">) {
    this.rules = rules;
    this.rate = rules.initialRate;
    this.filledAt = clock.now();
    this.window = { from: this.filledAt, busyFrom: clock.busyMs(), admitted: 0, shed: 0, minLate: Infinity };
  }

  /** Whether one more auction may be read now (then call `done` once it has answered), else shed it. */
  admit(): boolean {
    if (this.rate !== Infinity && this.inFlight >= this.rules.inFlightMin) {
      const now = this.clock.now();
      this.tokens = Math.min(Math.max(1, (this.rate * this.rules.burstMs) / 1000), this.tokens + ((now - this.filledAt) * this.rate) / 1000);
      this.filledAt = now;
      if (this.tokens < 1) {
        this.window.shed++;
        return false;
      }
      this.tokens--;
    }
    this.inFlight++;
    this.window.admitted++;
    return true;
  }

  /** An admitted auction has answered (or its connection closed). */
  done(): void {
    this.inFlight--;
  }

  /** The probe ticked at `now`, `lateMs` late: judge the window once it is over. */
  tick(now: number, lateMs: number): void {
    const window = this.window;
    window.minLate = Math.min(window.minLate, lateMs);
    const elapsed = now - window.from;
    if (elapsed < this.rules.windowMs) return;
    const busy = this.clock.busyMs();
    const utilisation = Math.min(1, Math.max(0, (busy - window.busyFrom) / elapsed));
    const admittedRate = (window.admitted * 1000) / elapsed;
    const { targetUtilisation, decrease, increase } = this.rules;
    // Busy share against the target: the factor by which the admitted work would meet it.
    const fit = utilisation > 0 ? targetUtilisation / utilisation : increase;
    // Behind throughout a busy window: a queue of its own work, to be drained (cut by decrease). Behind
    // while it idled, the loop waited for a core the machine's other processes held: cutting would
    // shed auctions without making room (2026-11-26 16:25, load ~9: cut to 0, 81/s ran in time
    // against 112/s without shedding).
    const queued = window.minLate > this.rules.lagMs;
    if (fit < 1) {
      this.setRate(Math.min(this.rate, admittedRate) * (queued ? decrease : Math.max(decrease, fit)));
      this.cuts++;
    } else if (window.shed > 0) this.setRate(Math.max(this.rate, admittedRate) * Math.min(increase, fit));
    // Traffic under half the rate and the loop under half its target: no rate until the next overload.
    // Not on a window that merely shed nothing: a raise just past the offer does that, and lifting
    // then let the next window admit the whole overload (the loop's busy share also reads low while
    // the machine's other processes hold its core).
    else if (2 * admittedRate < this.rate && utilisation < targetUtilisation / 2) this.rate = Infinity;
    this.last = { utilisation, lagMs: window.minLate };
    this.window = { from: now, busyFrom: busy, admitted: 0, shed: 0, minLate: Infinity };
  }

  private setRate(rate: number): void {
    if (this.rate === Infinity) this.filledAt = this.clock.now();
    this.rate = rate;
  }

  snapshot(): AdmissionSnapshot {
    return { rate: this.rate === Infinity ? null : Math.round(this.rate), inFlight: this.inFlight, cuts: this.cuts, ...this.last };
  }
}
