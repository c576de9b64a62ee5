/**
 * Outgoing HTTP of the exchange on undici's `dispatch` API: one keep-alive Pool per bidder
 * origin for bid requests, one Agent for notices and one for markup fetches (their URLs may
 * point anywhere). Every call has a body cap and can be aborted, so a bidder that hangs,
 * resets, answers garbage or streams a huge body costs at most its deadline and the cap.
 *
 * Notices are pipelined (HTTP/1.1, GET is safe to pipeline: RFC 9112 9.3.2) on a few
 * connections per origin, and a group of them leaves in one write per connection
 * (`sendNotices`): a notice costs the exchange and the bidder one HTTP exchange each, as much
 * CPU as a bid request, and grouping shares the system calls of both sides.
 *
 * Why `dispatch` and not `request`: `request` wraps every answer in a stream.Readable and takes
 * an AbortSignal (an EventTarget listener per call); a capped body collected by a small handler
 * costs a fraction of that, and the exchange makes four calls per auction. undici marks
 * `dispatch` as the API it may change in a major version: it is pinned to ^7 in package.json.
 */
import type { Socket } from "node:net";
import { Agent, Pool, buildConnector, errors as undiciErrors } from "undici";
// The rules module alone: the notice worker loads this file and has no use for the validators.
import { auctionRules } from "@adxkit/bindings";
import { guardedLookup } from "./notice-origins.js";
import type { Dispatcher } from "undici";

/** Bidder faults of auction-rejections: the whole answer counts as a no-bid from that bidder. */
export type BidderFault = "timeout" | "connection-error" | "http-error" | "malformed-response";

/** What one bid request call came back with. */
export type CallOutcome =
  | { kind: "answer"; text: string }
  | { kind: "no-bid"; detail: string }
  | { kind: "fault"; reason: BidderFault; detail: string };

/** What a GET came back with: the status, and the body text when it was read (undefined past the cap). */
export interface GetResult {
  status: number;
  text?: string;
}

/** A call in flight: `abort` ends it at once (its result is then the abort's). */
export interface PendingCall<T> {
  readonly result: Promise<T>;
  abort(reason: string): void;
}

/** Largest bidder answer or notice body read (1 MiB); a longer one is malformed. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Thrown into a call aborted by the exchange itself (deadline, close). */
export class CallAborted extends Error {
  override readonly name = "CallAborted";
}

const connectionCodes = new Set([
  "ECONNRESET", "ECONNREFUSED", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT",
  "UND_ERR_SOCKET", "UND_ERR_CLOSED", "UND_ERR_DESTROYED", "UND_ERR_CONNECT_TIMEOUT",
]);

/** Maps a failed call to a bidder fault: aborted or timed out → timeout, unparsable HTTP → malformed, else connection. */
export function classifyError(error: unknown): { reason: BidderFault; detail: string } {
  const err = error as { code?: string; name?: string; message?: string };
  if (error instanceof CallAborted) return { reason: "timeout", detail: error.message };
  const detail = `${err?.code ?? err?.name ?? "Error"}: ${err?.message ?? String(error)}`;
  if (err?.name === "AbortError" || err?.code === "UND_ERR_ABORTED") return { reason: "timeout", detail };
  if (err?.code === "UND_ERR_HEADERS_TIMEOUT" || err?.code === "UND_ERR_BODY_TIMEOUT") return { reason: "timeout", detail };
  if (error instanceof undiciErrors.HTTPParserError || String(err?.code).startsWith("HPE_")) return { reason: "malformed-response", detail };
  if (err?.code !== undefined && connectionCodes.has(err.code)) return { reason: "connection-error", detail };
  return { reason: "connection-error", detail };
}

/** How a call ended, as the handler saw it. */
type Ending = { status: number; text?: string; overCap?: true } | { error: unknown };

/** Which statuses have a body worth reading. */
type WantsBody = (status: number) => boolean;
const bidAnswer: WantsBody = (status) => status === 200;
const successWithBody: WantsBody = (status) => status >= 200 && status < 300 && status !== 204;
const noBody: WantsBody = () => false;

/**
 * A dispatch handler that collects a wanted body up to `maxBytes` and reports once, through
 * `finish`: at the end of the body, as soon as the status says the body is not wanted, when
 * the body passes the cap (then the connection is aborted), on error, on `abort`, or on `expire`
 * (then the exchange still reads what comes, up to the cap, and throws it away).
 */
class CappedBody implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  private status = 0;
  private collecting = false;
  private done = false;
  /** undici is done with the call (its answer read, or failed): its connection is back in the pool, or gone. */
  private settled = false;
  /** Told when an expired call's answer has been read in full (its connection kept). */
  private lateAnswered: (() => void) | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly wantsBody: WantsBody,
    private readonly finish: (ending: Ending) => void,
    /** Sees the final status's headers (notices learn from them whether the origin keeps connections open). */
    private readonly sawHeaders?: (headers: Record<string, string | string[] | undefined>) => void,
  ) {}

  private end(ending: Ending): void {
    if (this.done) return;
    this.done = true;
    this.chunks = [];
    this.finish(ending);
  }

  /** Ends the call now with `CallAborted(reason)`; the connection is dropped if the call started. */
  abort(reason: string): void {
    const error = new CallAborted(reason);
    this.end({ error });
    if (!this.settled) this.controller?.abort(error);
  }

  /**
   * Ends the call now with `CallAborted(reason)` like `abort`, but leaves its HTTP exchange
   * running: an answer that comes later is read (up to the cap) and thrown away, and its
   * keep-alive connection stays in the pool (`lateAnswered` is told). True when the exchange is
   * still running: `abort` ends it for good. A call still queued in the pool is never sent.
   */
  expire(reason: string, lateAnswered?: () => void): boolean {
    if (this.done) return false;
    this.end({ error: new CallAborted(reason) });
    if (this.settled || this.controller === undefined) return false;
    this.lateAnswered = lateAnswered;
    return true;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Aborted or expired while queued in the pool: never send it.
    if (this.done) controller.abort(new CallAborted("aborted before it was sent"));
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    if (status < 200 || this.done) return; // 1xx: informational, the real status follows; an expired call's answer is only drained
    this.status = status;
    this.sawHeaders?.(headers);
    if (!this.wantsBody(status)) {
      // The body is not wanted: answer now, let undici drain it so the connection stays usable.
      this.end({ status });
      return;
    }
    const declared = Number(headers["content-length"]);
    if (Number.isFinite(declared) && declared > this.maxBytes) {
      this.end({ status, overCap: true });
      controller.abort(new CallAborted("body over the cap"));
      return;
    }
    this.collecting = true;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.lateAnswered !== undefined) {
      // An expired call's answer: drained to keep the connection, up to the cap like any answer.
      this.size += chunk.length;
      if (this.size > this.maxBytes) controller.abort(new CallAborted("late body over the cap"));
      return;
    }
    if (!this.collecting || this.done) return;
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      this.end({ status: this.status, overCap: true });
      controller.abort(new CallAborted("body over the cap"));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.settled = true;
    if (this.done) {
      this.lateAnswered?.();
      return;
    }
    const chunks = this.chunks;
    const text = !this.collecting ? undefined : chunks.length === 1 ? chunks[0].toString("utf8") : Buffer.concat(chunks, this.size).toString("utf8");
    this.end({ status: this.status, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.settled = true;
    this.end({ error });
  }
}

/**
 * A bid request in flight. `expire` counts it as a timeout (the deadline passed) but lets its
 * answer come, so that the connection is not closed (a new one costs both sides a connect and
 * more CPU than a late answer's read); it returns true when the call is still running, and
 * `abort` then ends it for good (a bidder that does not answer at all).
 */
export interface BidCall {
  expire(detail: string, lateAnswered?: () => void): boolean;
  abort(detail: string): void;
}

export interface HttpClientOptions {
  /** Connections per bidder origin (default 128). */
  connections?: number;
  maxBodyBytes?: number;
  /** Notice connections per origin (default: x-adxkit-auction notice-connections-per-origin). */
  noticeConnections?: number;
  /** Notices in flight on one connection, HTTP/1.1 pipelining (default: notice-pipelining; 1 turns it off). */
  noticePipelining?: number;
  /**
   * Host names whose notices and markup fetches may reach loopback, private and link-local
   * addresses (bidders with allow_private_addresses); any other name resolving to one is refused
   * (notice-origins.ts guardedLookup). Bid requests go to the configured endpoints unchecked.
   */
  privateHosts?: readonly string[];
}

/** The agents of markup fetches and of notices to origins not pipelined to: one call per connection. */
const UNPIPELINED_AGENT = { keepAliveTimeout: 10_000, connections: 32 } as const;
/** Notice origins remembered by learnKeepAlive at most. */
const MAX_KNOWN_ORIGINS = 10_000;
const BID_HEADERS = { "content-type": "application/json", "x-openrtb-version": "2.5" };

/** The exchange's outgoing HTTP: pools per bidder origin, agents for notices and markup fetches. */
export class HttpClient {
  private readonly pools = new Map<string, Pool>();
  /** Notices to origins that keep connections open: pipelined. */
  private readonly noticeAgent: Agent;
  /** Notices to the other origins (not yet known, or closing connections): one per connection, as many connections as markup fetches. */
  private readonly plainNoticeAgent: Agent;
  /** Markup fetches wait for the auction: never queued behind pipelined notices. */
  private readonly markupAgent: Agent;
  /** Notice origins by whether their answers keep connections open (learnKeepAlive). */
  private readonly keepsAlive = new Map<string, boolean>();
  /** Open notice connections, corked together by sendNotices. */
  private readonly noticeSockets = new Set<Socket>();
  private readonly connections: number;
  readonly maxBodyBytes: number;

  constructor(options: HttpClientOptions = {}) {
    this.connections = options.connections ?? 128;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    // Notices and markup fetches go to addresses bidders give: each name is checked as it resolves.
    const lookup = guardedLookup(options.privateHosts ?? []);
    const connect = buildConnector({ lookup });
    this.noticeAgent = new Agent({
      keepAliveTimeout: 10_000,
      connections: options.noticeConnections ?? auctionRules.noticeConnectionsPerOrigin,
      pipelining: options.noticePipelining ?? auctionRules.noticePipelining,
      // undici's own connector; the sockets are kept so that sendNotices can cork them.
      connect: (connectOptions, callback) =>
        connect(connectOptions, (...result: buildConnector.CallbackArgs) => {
          // A failed connect calls back with the error alone: no socket to keep.
          const socket = result[1];
          if (socket != null) {
            this.noticeSockets.add(socket);
            socket.once("close", () => this.noticeSockets.delete(socket));
          }
          (callback as (...args: buildConnector.CallbackArgs) => void)(...result);
        }),
    });
    this.plainNoticeAgent = new Agent({ ...UNPIPELINED_AGENT, connect: { lookup } });
    this.markupAgent = new Agent({ ...UNPIPELINED_AGENT, connect: { lookup } });
  }

  /**
   * Runs `send` (which calls getStatus) with every notice connection corked, and uncorks them
   * in a later turn: the notices sent reach each connection's socket in one write. undici
   * writes on an idle keep-alive socket only in the check phase after the dispatch (it first
   * looks for a close the server sent meanwhile), so the uncork waits for a later immediate.
   */
  sendNotices(send: () => void): void {
    const corked = [...this.noticeSockets];
    for (const socket of corked) socket.cork();
    try {
      send();
    } finally {
      setImmediate(() => {
        for (const socket of corked) socket.uncork();
      });
    }
  }

  /** The keep-alive pool of a bidder origin, created on first use. */
  pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, { connections: this.connections, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /**
   * POSTs a bid request. `onOutcome` is called exactly once: with the answer, or the no-bid or
   * fault it amounts to, or a timeout when `expire` comes first. Never throws.
   */
  postBidRequest(origin: string, path: string, body: string | Buffer, onOutcome: (outcome: CallOutcome) => void): BidCall {
    const maxBytes = this.maxBodyBytes;
    const handler = new CappedBody(maxBytes, bidAnswer, (ending) => onOutcome(bidOutcome(ending, maxBytes)));
    try {
      this.pool(origin).dispatch({ origin, path, method: "POST", headers: BID_HEADERS, body }, handler);
    } catch (error) {
      handler.onResponseError(undefined as never, error as Error);
    }
    return handler;
  }

  /**
   * GETs a notice URL; resolves with the status and, with `readBody`, the capped body text.
   * Rejects on network failure, on `timeoutMs` without headers or between body chunks (undici's
   * own timers), and on abort.
   */
  get(url: URL, options: { readBody: boolean; timeoutMs: number }): PendingCall<GetResult> {
    let handler!: CappedBody;
    const result = new Promise<GetResult>((resolve, reject) => {
      const finish = (ending: Ending) => ("error" in ending ? reject(ending.error) : resolve(ending));
      handler = this.dispatchGet(this.markupAgent, url, true, new CappedBody(this.maxBodyBytes, options.readBody ? successWithBody : noBody, finish), options.timeoutMs);
    });
    return { result, abort: (reason) => handler.abort(reason) };
  }

  /**
   * GETs a URL without reading its body (win and billing notices): `onDone` is called once, with
   * the status or the error (as `get` rejects), possibly before this returns. No promise per
   * call: the exchange sends one notice per auction.
   */
  getStatus(url: URL, timeoutMs: number, onDone: (status: number, error?: unknown) => void): { abort(reason: string): void } {
    const origin = url.origin;
    const pipelined = this.keepsAlive.get(origin) === true;
    const finish = (ending: Ending) => ("error" in ending ? onDone(0, ending.error) : onDone(ending.status));
    const handler = new CappedBody(this.maxBodyBytes, noBody, finish, (headers) => this.learnKeepAlive(origin, headers));
    // undici pipelines a request only when it is not "blocking" (a GET is, by default).
    return this.dispatchGet(pipelined ? this.noticeAgent : this.plainNoticeAgent, url, !pipelined, handler, timeoutMs);
  }

  /**
   * Pipelining to an origin starts once one of its answers kept the connection open, and stops
   * for good at an answer that closes it: a server that closes after each answer may already
   * have acted on the requests pipelined behind (Node's own server does), and undici would send
   * them again, so the bidder would count a win or a billing twice.
   */
  private learnKeepAlive(origin: string, headers: Record<string, string | string[] | undefined>): void {
    const connection = headers.connection;
    const closes = connection !== undefined && /(?:^|[\s,])close(?:$|[\s,])/i.test(String(connection));
    if (!closes && this.keepsAlive.has(origin)) return; // known: keeps open, or closed once (for good)
    // Bounded: a bidder's nurl may name any host.
    if (this.keepsAlive.size >= MAX_KNOWN_ORIGINS && !this.keepsAlive.has(origin)) this.keepsAlive.clear();
    this.keepsAlive.set(origin, !closes);
  }

  private dispatchGet(agent: Agent, url: URL, blocking: boolean, handler: CappedBody, timeoutMs: number): CappedBody {
    try {
      agent.dispatch({ origin: url.origin, path: url.pathname + url.search, method: "GET", blocking, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }, handler);
    } catch (error) {
      handler.onResponseError(undefined as never, error as Error);
    }
    return handler;
  }

  /** Closes every pool and the agent: calls in flight get `graceMs` to finish, then are aborted. */
  async close(graceMs = 1000): Promise<void> {
    const all: Dispatcher[] = [...this.pools.values(), this.noticeAgent, this.plainNoticeAgent, this.markupAgent];
    this.pools.clear();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled(all.map((d) => d.close())), grace]);
    clearTimeout(timer);
    await Promise.allSettled(all.map((d) => d.destroy()));
  }
}

/** What a bid request call amounts to: 204 or an empty 200 is a no-bid, other statuses http-error, a body past the cap malformed. */
function bidOutcome(ending: Ending, maxBytes: number): CallOutcome {
  if ("error" in ending) {
    const { reason, detail } = classifyError(ending.error);
    return { kind: "fault", reason, detail };
  }
  if (ending.status === 204) return { kind: "no-bid", detail: "HTTP 204" };
  if (ending.status !== 200) return { kind: "fault", reason: "http-error", detail: `HTTP ${ending.status}` };
  if (ending.overCap) return { kind: "fault", reason: "malformed-response", detail: `body over ${maxBytes} bytes` };
  const text = ending.text ?? "";
  if (text.trim() === "") return { kind: "no-bid", detail: "HTTP 200 with an empty body" };
  return { kind: "answer", text };
}
