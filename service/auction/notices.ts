/**
 * Win and billing notices (interface document part 6): HTTP GET on the bidder's nurl or burl,
 * macros already replaced, off the hot path. A failed call (network error, timeout, HTTP 5xx or
 * 429) is retried with exponential backoff a bounded number of times; nothing waits for it.
 * Notices are held for up to `batchMs` and sent together, pipelined on a few connections per
 * origin (http-client.ts sendNotices): at one win notice per auction, sending each on its own
 * cost the exchange about 50 µs of CPU and the bidder about as much (bench/auction.ts).
 */
// The rules module alone: the notice worker loads this file and has no use for the validators.
import { auctionRules } from "@adxkit/bindings";
import type { EventLogger } from "../events/facts.js";
import { CallAborted, type HttpClient } from "./http-client.js";
import { ADDRESS_REFUSED } from "./notice-origins.js";

export type NoticeKind = "win" | "billing";

export interface NoticeOptions {
  /** Calls per notice, the first included (default: x-adxkit-auction notice-attempts, 3). */
  attempts?: number;
  /** Delay before the first retry; doubles each retry (default 100 ms). */
  baseDelayMs?: number;
  /** Time allowed to one call (default 2000 ms). */
  timeoutMs?: number;
  /** How long a notice may wait for others to be sent with (default: notice-batch-ms, 25 ms; 0 sends each at once). */
  batchMs?: number;
  /** Connections per notice origin (default: notice-connections-per-origin, 4). */
  connections?: number;
  /** Notices in flight on one connection, HTTP/1.1 pipelining (default: notice-pipelining, 16; 1 turns it off). */
  pipelining?: number;
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
  /** Not called: the host resolved to a loopback, private or link-local address (notice-origins.ts). */
  refused: number;
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
/** A connection the exchange refused to open (a name resolving to a private address): never retried. */
const isRefusal = (error: unknown) => (error as { code?: unknown } | undefined)?.code === ADDRESS_REFUSED;

/** One notice until it is delivered or given up: its calls so far, and the call or retry timer it waits on. */
interface Notice {
  kind: NoticeKind;
  url: URL;
  context: object;
  attempt: number;
  call?: { abort(reason: string): void };
  retry?: NodeJS.Timeout;
}

/**
 * Sends notices in the background and keeps track of them until they are done. Callbacks, not
 * an async function per notice: the exchange sends one per auction, and a promise chain per
 * notice cost it more CPU than the HTTP call's own JavaScript (bench/auction.ts).
 */
export class NoticeSender {
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  private readonly batchMs: number;
  /** Notices waiting for the next batch (also in `active`). */
  private batch: Notice[] = [];
  private batchTimer: NodeJS.Timeout | undefined;
  /** Notices in flight or waiting for a retry. */
  private readonly active = new Set<Notice>();
  /** Called when the last active notice is done (close waits for it). */
  private onIdle: (() => void)[] = [];
  private stopped = false;
  /** Called after the counters or the pending count changed (the notice thread publishes them). */
  onChange: (() => void) | undefined;
  private readonly counters: Record<NoticeKind, KindCounters> = {
    win: { sent: 0, delivered: 0, retried: 0, failed: 0, dropped: 0, refused: 0 },
    billing: { sent: 0, delivered: 0, retried: 0, failed: 0, dropped: 0, refused: 0 },
  };

  constructor(
    private readonly http: HttpClient,
    private readonly logger: EventLogger,
    options: NoticeOptions = {},
  ) {
    this.attempts = Math.max(1, options.attempts ?? auctionRules.noticeAttempts);
    this.baseDelayMs = options.baseDelayMs ?? 100;
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.maxPending = options.maxPending ?? 10_000;
    this.batchMs = options.batchMs ?? auctionRules.noticeBatchMs;
  }

  /** Calls a notice URL in the background, with retries. */
  send(kind: NoticeKind, text: string, context: object): void {
    const notice = this.admit(kind, text, context);
    if (notice !== undefined) {
      if (this.batchMs <= 0) this.http.sendNotices(() => this.call(notice));
      else {
        this.batch.push(notice);
        this.batchTimer ??= setTimeout(this.sendBatch, this.batchMs);
      }
    }
    this.onChange?.();
  }

  /**
   * Sends notices now, together with any still waiting for the batch: the notice thread hands
   * over groups the exchange already held for the batch window.
   */
  sendNow(notices: Iterable<[kind: NoticeKind, text: string, context: object]>): void {
    for (const [kind, text, context] of notices) {
      const notice = this.admit(kind, text, context);
      if (notice !== undefined) this.batch.push(notice);
    }
    if (this.batchTimer !== undefined) clearTimeout(this.batchTimer);
    if (this.batch.length > 0) this.sendBatch();
    this.onChange?.();
  }

  /** Counts a notice and starts tracking it; undefined when it is not to be called (bad URL, too many pending, closing). */
  private admit(kind: NoticeKind, text: string, context: object): Notice | undefined {
    const counters = this.counters[kind];
    counters.sent++;
    const url = noticeUrl(text);
    if (url === undefined) {
      counters.failed++;
      this.logger.warn({ ...context, kind, url: text }, "notice URL is not an absolute http(s) URL; not called");
      return undefined;
    }
    if (this.active.size >= this.maxPending) {
      // Once per thousand drops: a dead notice endpoint must not flood the log either.
      if (counters.dropped++ % 1000 === 0) this.logger.warn({ ...context, kind, pending: this.active.size, dropped: counters.dropped }, "too many notices pending; dropped");
      return undefined;
    }
    const notice: Notice = { kind, url, context, attempt: 0 };
    if (this.stopped) {
      this.giveUp(notice, "the exchange is closing");
      return undefined;
    }
    this.active.add(notice);
    return notice;
  }

  private readonly sendBatch = (): void => {
    const batch = this.batch;
    this.batch = [];
    this.batchTimer = undefined;
    this.http.sendNotices(() => {
      for (const notice of batch) this.call(notice);
    });
  };

  private call(notice: Notice): void {
    notice.attempt++;
    notice.retry = undefined;
    let ended = false;
    const call = this.http.getStatus(notice.url, this.timeoutMs, (status, error) => {
      ended = true;
      notice.call = undefined;
      this.callEnded(notice, status, error);
    });
    if (!ended) notice.call = call;
  }

  private callEnded(notice: Notice, status: number, error: unknown): void {
    this.onChange?.();
    if (error === undefined && status >= 200 && status < 300) {
      this.counters[notice.kind].delivered++;
      return this.done(notice);
    }
    if (isRefusal(error)) {
      this.counters[notice.kind].refused++;
      this.logger.warn({ ...notice.context, kind: notice.kind, url: notice.url.href, error: (error as Error).message }, "notice refused");
      return this.done(notice);
    }
    let last: string;
    if (error === undefined) last = `HTTP ${status}`;
    else {
      const code = (error as { code?: string }).code;
      last = code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" ? `no answer within ${this.timeoutMs} ms` : `${code ?? (error as Error).name}: ${(error as Error).message}`;
    }
    if ((error === undefined && !retryable(status)) || notice.attempt >= this.attempts || this.stopped) return this.giveUp(notice, last);
    this.counters[notice.kind].retried++;
    notice.retry = setTimeout(() => this.call(notice), this.baseDelayMs * 2 ** (notice.attempt - 1));
  }

  private giveUp(notice: Notice, last: string): void {
    this.counters[notice.kind].failed++;
    this.logger.warn({ ...notice.context, kind: notice.kind, url: notice.url.href, error: last }, "notice failed");
    this.done(notice);
  }

  private done(notice: Notice): void {
    this.active.delete(notice);
    if (this.active.size === 0 && this.onIdle.length > 0) for (const resolve of this.onIdle.splice(0)) resolve();
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
      if (isRefusal(error)) {
        counters.refused++;
        return { error: `win notice refused: ${(error as Error).message}` };
      }
      counters.failed++;
      return { error: error instanceof CallAborted ? error.message : `win notice failed: ${(error as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits up to `graceMs` for notices in flight or waiting for a retry, then abandons the rest. */
  async close(graceMs = 1000): Promise<void> {
    if (this.batchTimer !== undefined) {
      clearTimeout(this.batchTimer);
      this.sendBatch();
    }
    if (this.active.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.onIdle.push(resolve);
        timer = setTimeout(resolve, graceMs);
      });
      clearTimeout(timer);
      this.onIdle = [];
    }
    this.stopped = true;
    for (const notice of [...this.active]) {
      if (notice.retry !== undefined) {
        clearTimeout(notice.retry);
        this.giveUp(notice, "the exchange is closing");
      } else notice.call?.abort("the exchange is closing");
    }
  }

  /** Notices in flight or waiting for a retry. */
  get pending(): number {
    return this.active.size;
  }

  stats(): Record<NoticeKind, KindCounters> & { pending: number } {
    return { win: { ...this.counters.win }, billing: { ...this.counters.billing }, pending: this.active.size };
  }
}
