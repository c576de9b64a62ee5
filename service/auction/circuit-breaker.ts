/**
 * A circuit breaker per bidder: a bidder whose last `threshold` calls all failed (timeout,
 * connection error, HTTP error, malformed answer, wrong request id) is skipped for `cooldownMs`;
 * then one probe call is let through (half-open). The probe's success closes the circuit, its
 * failure opens it for another cooldown. While the probe is in flight the other auctions skip
 * the bidder. A skipped call is not a fault: it costs the auction nothing and is counted apart.
 *
 * Time comes from an injectable clock (epoch or monotonic milliseconds; only differences are used).
 */

export type CircuitState = "closed" | "open" | "half-open";

export interface CircuitBreakerOptions {
  /** Consecutive faults that open the circuit (default 10). */
  threshold?: number;
  /** How long an open circuit skips the bidder before a probe (default 5000 ms). */
  cooldownMs?: number;
  /** Milliseconds; Date.now by default. Tests inject a fake clock. */
  clock?: () => number;
  /**
   * The exchange charges a timeout only when the bidder had at least its timeout_ms, or this
   * long when it has none (default x-adxkit-auction breaker-timeout-floor-ms); shorter ones are
   * `inconclusive`.
   */
  timeoutFloorMs?: number;
}

export const DEFAULT_BREAKER_THRESHOLD = 10;
export const DEFAULT_BREAKER_COOLDOWN_MS = 5000;

/** What `CircuitBreaker.snapshot()` returns (part of the exchange's stats). */
export interface CircuitSnapshot {
  state: CircuitState;
  consecutiveFaults: number;
  /** Times the circuit opened (from closed, or again after a failed probe). */
  opened: number;
  /** Calls skipped because the circuit was open or a probe was in flight. */
  skipped: number;
}

export class CircuitBreaker {
  private readonly threshold: number;
  private readonly cooldownMs: number;
  private readonly clock: () => number;
  private consecutiveFaults = 0;
  private openedAt = 0;
  private probing = false;
  private probeStartedAt = 0;
  private stateValue: CircuitState = "closed";
  opened = 0;
  skipped = 0;

  constructor(options: CircuitBreakerOptions = {}) {
    this.threshold = Math.max(1, options.threshold ?? DEFAULT_BREAKER_THRESHOLD);
    this.cooldownMs = Math.max(0, options.cooldownMs ?? DEFAULT_BREAKER_COOLDOWN_MS);
    this.clock = options.clock ?? Date.now;
  }

  /** The state now (an open circuit past its cooldown reads as half-open). */
  get state(): CircuitState {
    if (this.stateValue === "open" && this.clock() - this.openedAt >= this.cooldownMs) return "half-open";
    return this.stateValue;
  }

  /**
   * Whether a call may go out now. Closed: yes. Open within the cooldown: no (counted skipped).
   * Past the cooldown: yes for one probe, no for the others until the probe settles (a probe
   * that never settles is replaced after another cooldown).
   */
  allow(): boolean {
    if (this.stateValue === "closed") return true;
    const now = this.clock();
    if (this.stateValue === "open" && now - this.openedAt >= this.cooldownMs) this.stateValue = "half-open";
    if (this.stateValue === "half-open" && (!this.probing || now - this.probeStartedAt >= this.cooldownMs)) {
      this.probing = true;
      this.probeStartedAt = now;
      return true;
    }
    this.skipped++;
    return false;
  }

  /** The call got a proper answer (a bid response or a no-bid): the circuit closes. */
  success(): void {
    this.consecutiveFaults = 0;
    this.probing = false;
    this.stateValue = "closed";
  }

  /**
   * The call said nothing about the bidder's health (it timed out with less time than the bidder
   * needs): the count is unchanged, and a probe is released so that the next call probes again.
   */
  inconclusive(): void {
    this.probing = false;
  }

  /** The call failed: counts towards the threshold; a failed probe reopens the circuit. */
  failure(): void {
    this.consecutiveFaults++;
    if (this.stateValue === "half-open" || (this.stateValue === "closed" && this.consecutiveFaults >= this.threshold)) {
      this.stateValue = "open";
      this.openedAt = this.clock();
      this.probing = false;
      this.opened++;
    }
  }

  snapshot(): CircuitSnapshot {
    return { state: this.state, consecutiveFaults: this.consecutiveFaults, opened: this.opened, skipped: this.skipped };
  }
}
