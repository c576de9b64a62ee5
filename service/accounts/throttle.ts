/**
 * Slows down credential guessing: after `maxFailures` failed credentials from one address
 * within `windowMs`, that address is refused (-3, without checking) until the window passes.
 * In memory, per process: enough for one node; behind a load balancer each node counts alone.
 */
export interface AuthThrottleOptions {
  maxFailures?: number;
  windowMs?: number;
  now?: () => number;
}

export function createAuthThrottle(options: AuthThrottleOptions = {}) {
  const maxFailures = options.maxFailures ?? 20;
  const windowMs = options.windowMs ?? 60_000;
  const now = options.now ?? Date.now;
  const failures = new Map<string, { count: number; since: number }>();
  const entry = (source: string) => {
    const current = failures.get(source);
    if (current && now() - current.since > windowMs) {
      failures.delete(source);
      return undefined;
    }
    return current;
  };
  return {
    failed(source: string) {
      const current = entry(source);
      if (current) current.count++;
      else failures.set(source, { count: 1, since: now() });
      // Bound memory under a flood of distinct sources.
      if (failures.size > 100_000) failures.delete(failures.keys().next().value!);
    },
    blocked: (source: string) => (entry(source)?.count ?? 0) >= maxFailures,
    succeeded: (source: string) => void failures.delete(source),
  };
}
