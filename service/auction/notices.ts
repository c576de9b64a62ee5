/**
 * Win and billing notices (interface document part 6): HTTP GET on the bidder's nurl or burl,
 * macros already replaced, off the hot path. A failed call (network error, timeout, HTTP 5xx or
 * 429) is retried with exponential backoff a bounded number of times; nothing waits for it.
 */
import type { EventLogger } from "../events/facts.js";
import { CallAborted, type HttpClient, type PendingCall } from "./http-client.js";

export type NoticeKind = "win" | "billing";

export interface NoticeOptions {
  /** Calls per notice, the first included (default 3). */
  attempts?: number;
  /** Delay before the first retry; doubles each retry (default 100 ms). */
  baseDelayMs?: number;
  /** Time allowed to one call (default 2000 ms). */
  timeoutMs?: number;
  /** Notices waiting or in flight at most; past it new ones are dropped and counted (default 10000). */
  maxPending?: number;
}

export interface KindCounters {
  sent: number;
  delivered: number;
  retried: number;
  failed: number;
  /** Not called: too many notices pending (a bidder's notice endpoint is down or slow). */
  dropped: number;
}

/** A notice URL must be absolute http(s); anything else is not called. */
export function noticeUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}

const retryable = (status: number) => status >= 500 || status === 429;

/** Sends notices in the background and keeps track of them until they are done. */
export class NoticeSender {
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  private readonly inFlight = new Set<Promise<void>>();
  /** Calls in flight: close() aborts them. */
  private readonly calls = new Set<PendingCall<unknown>>();
  private stopped = false;
  private readonly wakers = new Set<() => void>();
  private readonly counters: Record<NoticeKind, KindCounters> = {
    win: { sent: 0, delivered: 0, retried: 0, failed: 0, dropped: 0 },
    billing: { sent: 0, delivered: 0, retried: 0, failed: 0, dropped: 0 },
  };

  constructor(
    private readonly http: HttpClient,
    private readonly logger: EventLogger,
    options: NoticeOptions = {},
  ) {
    this.attempts = Math.max(1, options.attempts ?? 3);
    this.baseDelayMs = options.baseDelayMs ?? 100;
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.maxPending = options.maxPending ?? 10_000;
  }

  /** Calls a notice URL in the background, with retries. */
  send(kind: NoticeKind, text: string, context: object): void {
    const counters = this.counters[kind];
    counters.sent++;
    const url = noticeUrl(text);
    if (url === undefined) {
      counters.failed++;
      this.logger.warn({ ...context, kind, url: text }, "notice URL is not an absolute http(s) URL; not called");
      return;
    }
    if (this.inFlight.size >= this.maxPending) {
      // Once per thousand drops: a dead notice endpoint must not flood the log either.
      if (counters.dropped++ % 1000 === 0) this.logger.warn({ ...context, kind, pending: this.inFlight.size, dropped: counters.dropped }, "too many notices pending; dropped");
      return;
    }
    const task = this.deliver(kind, url, context).finally(() => this.inFlight.delete(task));
    this.inFlight.add(task);
  }

  private async deliver(kind: NoticeKind, url: URL, context: object): Promise<void> {
    const counters = this.counters[kind];
    let last = "";
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      if (attempt > 1) {
        counters.retried++;
        if (!(await this.sleep(this.baseDelayMs * 2 ** (attempt - 2)))) break;
      }
      if (this.stopped) break;
      const call = this.http.get(url, { readBody: false, timeoutMs: this.timeoutMs });
      this.calls.add(call);
      try {
        const { status } = await call.result;
        if (status >= 200 && status < 300) {
          counters.delivered++;
          return;
        }
        last = `HTTP ${status}`;
        if (!retryable(status)) break;
      } catch (error) {
        const code = (error as { code?: string }).code;
        last = code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" ? `no answer within ${this.timeoutMs} ms` : `${code ?? (error as Error).name}: ${(error as Error).message}`;
      } finally {
        this.calls.delete(call);
      }
    }
    counters.failed++;
    this.logger.warn({ ...context, kind, url: url.href, error: last }, "notice failed");
  }

  /** Waits `ms` unless the sender stops first; false when stopped. */
  private sleep(ms: number): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.wakers.delete(wake);
        resolve(true);
      }, ms);
      this.wakers.add(wake);
    });
  }

  /**
   * Calls a winning bid's nurl once, within `ms`, and returns the body as ad markup (the bid had
   * no adm); an error instead when the call fails, is not 2xx, is empty or misses the deadline.
   */
  async fetchMarkup(text: string, ms: number): Promise<{ markup?: string; error?: string }> {
    const counters = this.counters.win;
    counters.sent++;
    const url = noticeUrl(text);
    if (url === undefined) {
      counters.failed++;
      return { error: "nurl is not an absolute http(s) URL" };
    }
    const late = "win notice did not answer before the deadline";
    if (ms <= 0) {
      counters.failed++;
      return { error: late };
    }
    const call = this.http.get(url, { readBody: true, timeoutMs: ms });
    // undici's timeouts bound each wait, not the whole call: the auction's deadline is a hard one.
    const timer = setTimeout(() => call.abort(late), ms);
    try {
      const { status, text: body } = await call.result;
      if (status < 200 || status >= 300) {
        counters.failed++;
        return { error: `win notice answered HTTP ${status}` };
      }
      counters.delivered++;
      if (body === undefined) return { error: "win notice body over the size cap" };
      if (body.trim() === "") return { error: "win notice returned no markup" };
      return { markup: body };
    } catch (error) {
      counters.failed++;
      return { error: error instanceof CallAborted ? error.message : `win notice failed: ${(error as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits up to `graceMs` for notices in flight, then abandons the rest. */
  async close(graceMs = 1000): Promise<void> {
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
      clearTimeout(timer);
    }
    this.stopped = true;
    for (const wake of this.wakers) wake();
    for (const call of this.calls) call.abort("the exchange is closing");
    await Promise.allSettled([...this.inFlight]);
  }

  /** Notices waiting or in flight. */
  get pending(): number {
    return this.inFlight.size;
  }

  stats(): Record<NoticeKind, KindCounters> & { pending: number } {
    return { win: { ...this.counters.win }, billing: { ...this.counters.billing }, pending: this.inFlight.size };
  }
}
