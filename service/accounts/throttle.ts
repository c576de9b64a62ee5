/**
 * Slows down credential guessing on every path that checks a credential (report credentials,
 * auction keys). After `maxFailures` failed checks from one address, or against one userid,
 * within `windowMs` of the first of them, that address or userid is refused without a check
 * until the window has passed. Failures expire only with time: a success does not reset them,
 * or one valid login would buy another batch of guesses (1,140 checked guesses in 2.8 s).
 * In memory, per process: enough for one node; behind a load balancer each node counts alone.
 */
export interface AuthThrottleOptions {
  maxFailures?: number;
  windowMs?: number;
  now?: () => number;
}

/** Who a credential check is for: the caller's address, and the userid it named, if any. */
export interface CredentialSource {
  address: string;
  userid?: string;
}

/** The throttle every credential check goes through (service/app.ts shares one per server). */
export interface AuthThrottle {
  /** True when this address or userid has used up its failures: refuse without checking. */
  blocked(source: CredentialSource): boolean;
  /** Counts a failed check against the address and the userid. */
  failed(source: CredentialSource): void;
  /** Milliseconds until the address and userid of `source` may be checked again (0 when not blocked). */
  retryAfterMs(source: CredentialSource): number;
}

/** Sources tracked at most; the oldest goes first under a flood of distinct addresses or userids. */
const MAX_TRACKED = 100_000;

export function createAuthThrottle(options: AuthThrottleOptions = {}): AuthThrottle {
  const maxFailures = options.maxFailures ?? 20;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const failures = new Map<string, { count: number; since: number }>();
  const entry = (key: string) => {
    const current = failures.get(key);
    if (current && now() - current.since >= windowMs) {
      failures.delete(key);
      return undefined;
    }
    return current;
  };
  // A userid is any string a caller sends: an unknown one is counted like a known one, so the
  // throttle does not tell which exist.
  const keys = (source: CredentialSource) => (source.userid ? [`address:${source.address}`, `userid:${source.userid}`] : [`address:${source.address}`]);
  const full = (key: string) => (entry(key)?.count ?? 0) >= maxFailures;
  return {
    blocked: (source) => keys(source).some(full),
    failed(source) {
      for (const key of keys(source)) {
        const current = entry(key);
        if (current) current.count++;
        else failures.set(key, { count: 1, since: now() });
      }
      while (failures.size > MAX_TRACKED) failures.delete(failures.keys().next().value!);
    },
    retryAfterMs(source) {
      let wait = 0;
      for (const key of keys(source)) if (full(key)) wait = Math.max(wait, failures.get(key)!.since + windowMs - now());
      return wait;
    },
  };
}
