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
 * It is judged a window (admission-window-ms) at a time, on the probe's ticks. What cuts it is a
 * standing queue, the evidence that answers are about to be late: every tick of the window and of
 * the one before ran more than admission-lag-ms late (the loop did not once catch up in that time:
 * CoDel's minimum sojourn time over an interval), in a window whose loop was busy more than
 * admission-target-utilisation of it (behind while it idled, it waited for a core the machine's
 * other processes held, and shedding would make no room). The rate then becomes what the two
 * windows admitted, times admission-decrease, and that admitted rate is remembered as where the
 * queue stood (the ceiling). While the queue drains after a cut (each window less behind than at
 * the cut) the rate holds: cutting again on the queue the last cut is draining spiralled the rate
 * to a quarter of the capacity. Being busy is no overload: a closed loop of callers keeps the loop
 * busy whatever it admits, and answered in time. A window that shed auctions and whose loop caught
 * up within half admission-lag-ms raises the rate: by admission-increase (or to what it admitted,
 * if more) up to admission-decrease of the ceiling, and past that by admission-probe-step of the
 * ceiling a window (raised by a quarter a window throughout, the rate overshot what the loop could
 * run before two windows could tell, and the queue that followed made answers late); what such a
 * window admitted raises the ceiling, if more. Nearer a queue the rate holds. Each request takes a token
 * of a bucket refilled at the rate, holding admission-burst-ms of it; with none left it is shed unread. While fewer than
 * admission-in-flight-min auctions are in flight a request is always admitted: a few callers at a
 * time are not an overload, however busy the machine.
 * There is no rate until a window is overloaded, and none again (nor a ceiling) after
 * admission-lift-windows windows in a row that shed nothing, admitted less than half the rate and
 * kept the loop under half its target.
 */
export interface AdmissionOptions {
  /** The window, ms (admission-window-ms). */
  windowMs?: number;
  /** Two windows whose every tick ran later than this are a standing queue (admission-lag-ms). */
  lagMs?: number;
  /** A standing queue cuts only in a window busier than this share of its time (admission-target-utilisation). */
  targetUtilisation?: number;
  /** The factor of a cut (admission-decrease). */
  decrease?: number;
  /** The factor of a raise (admission-increase). */
  increase?: number;
  /** Past where the last cut left it, a raise adds this share of the ceiling (admission-probe-step). */
  probeStep?: number;
  /** Calm windows in a row that leave no rate (admission-lift-windows). */
  liftWindows?: number;
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
  /** The admitted rate at which the last cut found a standing queue, auctions a second (null: none since the last lift). */
  ceiling: number | null;
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
  /** Where the last cut found a standing queue (Infinity: none since the last lift). */
  private ceiling = Infinity;
  /** How late the loop was at the last cut, while the queue it found has not drained (undefined: none). */
  private lateAtCut: number | undefined;
  /** Calm windows in a row (lift-windows of them lift the rate). */
  private calm = 0;
  private window: { from: number; busyFrom: number; admitted: number; shed: number; minLate: number };
  private last = { utilisation: 0, lagMs: 0 };
  /** The window before: its smallest tick lateness, and what it admitted over how long. */
  private previous = { minLate: 0, admitted: 0, elapsed: 0 };

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
    const { targetUtilisation, decrease } = this.rules;
    // A standing queue: every tick of this window and the one before ran more than lag-ms late, so
    // the loop did not catch up with its work for that long (CoDel's minimum sojourn time over an
    // interval). A busy loop without one is saturated but answering in time: a closed loop of
    // callers keeps it busy > 90 % whatever it admits, and cutting on the busy share alone shed
    // their requests, which they sent again at once: the loop stayed busy, the rate spiralled down
    // (41 % of the bare fan-out against 72 %, 52,523 sheds, p99 45 ms of a tmax of 150; 2026-11-26,
    // load ~1.3). One window is not enough: one long turn (or the process off its core) fills it.
    const queued = Math.min(window.minLate, this.previous.minLate) > this.rules.lagMs;
    const previous = this.previous;
    this.previous = { minLate: window.minLate, admitted: window.admitted, elapsed };
    // Behind while it idled part of the window, the loop waited for a core the machine's other
    // processes held: cutting would shed auctions without making room (2026-11-26 16:25, load ~9:
    // lag alone cut to 0, 81/s ran in time against 112/s without shedding).
    const overloaded = queued && utilisation > targetUtilisation;
    // A window less behind than the last cut's is that queue draining: cutting again on it spiralled
    // the rate down to 174/s at a capacity of 963 (overload row, 2026-11-27 00:18).
    const draining = overloaded && this.lateAtCut !== undefined && window.minLate < this.lateAtCut;
    if (!queued) this.lateAtCut = undefined;
    if (overloaded && !draining) {
      // To what the two windows admitted (the rate may be far above it, or none), less decrease.
      const admittedBoth = ((window.admitted + previous.admitted) * 1000) / (elapsed + previous.elapsed);
      this.ceiling = Math.min(this.rate, admittedBoth);
      this.setRate(this.ceiling * decrease);
      this.lateAtCut = window.minLate;
      this.cuts++;
    } else if (!overloaded && window.shed > 0 && window.minLate < this.rules.lagMs / 2) {
      // The loop ran what this window admitted and caught up: the queue does not stand there.
      if (this.ceiling !== Infinity) this.ceiling = Math.max(this.ceiling, admittedRate);
      // The loop caught up within half lag-ms: room for more. Quickly up to decrease of the ceiling,
      // slowly past it: by a quarter a window throughout, the rate rose past what the loop could run
      // while two windows told, and the queue that followed made answers late (overload row,
      // 2026-11-27 00:56: 300 to 1,500 in eight windows, then cut to 275, 2,186 answers late).
      this.setRate(this.raised(admittedRate));
    }
    // Traffic under half the rate and the loop under half its target for lift-windows in a row: no
    // rate until the next overload. Not on one such window, nor on one that merely shed nothing: a
    // raise just past the offer does that, a load generator starved of its core too, and lifting
    // then let the next window admit the whole overload (the loop's busy share also reads low while
    // the machine's other processes hold its core).
    this.calm = window.shed === 0 && 2 * admittedRate < this.rate && utilisation < targetUtilisation / 2 ? this.calm + 1 : 0;
    if (this.calm >= this.rules.liftWindows) {
      this.rate = Infinity;
      this.ceiling = Infinity;
      this.calm = 0;
    }
    this.last = { utilisation, lagMs: window.minLate };
    this.window = { from: now, busyFrom: busy, admitted: 0, shed: 0, minLate: Infinity };
  }

  /** The rate after a window with room for more: quick up to decrease of the ceiling (or with none), a probe step past it. */
  private raised(admittedRate: number): number {
    const quick = Math.max(this.rate * this.rules.increase, admittedRate);
    if (this.ceiling === Infinity) return quick;
    const resumed = this.ceiling * this.rules.decrease;
    if (this.rate < resumed) return Math.min(resumed, quick);
    return Math.max(admittedRate, this.rate + this.ceiling * this.rules.probeStep);
  }

  private setRate(rate: number): void {
    if (this.rate === Infinity) this.filledAt = this.clock.now();
    this.rate = rate;
  }

  snapshot(): AdmissionSnapshot {
    return { rate: this.rate === Infinity ? null : Math.round(this.rate), inFlight: this.inFlight, cuts: this.cuts, ceiling: this.ceiling === Infinity ? null : Math.round(this.ceiling), ...this.last };
  }
}
