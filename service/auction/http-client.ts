/**
 * Outgoing HTTP of the exchange, on undici's `request` API: one keep-alive Pool per bidder
 * origin for bid requests, one Agent for notices (their URLs may point anywhere). Every call
 * is bounded by an AbortSignal and a body cap, so a bidder that hangs, resets, answers garbage
 * or streams a huge body costs at most its deadline and the cap.
 */
import { Agent, Pool, errors as undiciErrors } from "undici";
import type { Dispatcher } from "undici";

/** Bidder faults of auction-rejections: the whole answer counts as a no-bid from that bidder. */
export type BidderFault = "timeout" | "connection-error" | "http-error" | "malformed-response";

/** What one bid request call came back with. */
export type CallOutcome =
  | { kind: "answer"; text: string }
  | { kind: "no-bid"; detail: string }
  | { kind: "fault"; reason: BidderFault; detail: string };

/** Largest bidder answer or notice body read (1 MiB); a longer one is malformed. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const connectionCodes = new Set([
  "ECONNRESET", "ECONNREFUSED", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ETIMEDOUT",
  "UND_ERR_SOCKET", "UND_ERR_CLOSED", "UND_ERR_DESTROYED", "UND_ERR_CONNECT_TIMEOUT",
]);

/** Maps a failed call to a bidder fault: aborted or timed out → timeout, unparsable HTTP → malformed, else connection. */
export function classifyError(error: unknown, signal?: AbortSignal): { reason: BidderFault; detail: string } {
  const err = error as { code?: string; name?: string; message?: string };
  const detail = `${err?.code ?? err?.name ?? "Error"}: ${err?.message ?? String(error)}`;
  if (signal?.aborted || err?.name === "AbortError" || err?.code === "UND_ERR_ABORTED") return { reason: "timeout", detail };
  if (err?.code === "UND_ERR_HEADERS_TIMEOUT" || err?.code === "UND_ERR_BODY_TIMEOUT") return { reason: "timeout", detail };
  if (error instanceof undiciErrors.HTTPParserError || String(err?.code).startsWith("HPE_")) return { reason: "malformed-response", detail };
  if (err?.code !== undefined && connectionCodes.has(err.code)) return { reason: "connection-error", detail };
  return { reason: "connection-error", detail };
}

/** Reads a response body as UTF-8 text, or undefined (and the body destroyed) past `maxBytes`. */
export async function readCapped(body: Dispatcher.ResponseData["body"], headers: Dispatcher.ResponseData["headers"], maxBytes: number): Promise<string | undefined> {
  const declared = Number(headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    body.destroy();
    return undefined;
  }
  // A declared length within the cap is enforced by the HTTP framing: read it in one go.
  if (headers["content-length"] !== undefined && Number.isFinite(declared)) return body.text();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 1 ? chunks[0].toString("utf8") : Buffer.concat(chunks, size).toString("utf8");
}

export interface HttpClientOptions {
  /** Connections per bidder origin (default 128). */
  connections?: number;
  maxBodyBytes?: number;
}

const discard = (body: Dispatcher.ResponseData["body"]) => void body.dump().catch(() => {});

/** The exchange's outgoing HTTP: pools per bidder origin, an agent for notices. */
export class HttpClient {
  private readonly pools = new Map<string, Pool>();
  private readonly agent: Agent;
  private readonly connections: number;
  readonly maxBodyBytes: number;

  constructor(options: HttpClientOptions = {}) {
    this.connections = options.connections ?? 128;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.agent = new Agent({ keepAliveTimeout: 10_000, connections: 32 });
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

  /** POSTs a bid request; never throws: every failure is an outcome. */
  async postBidRequest(origin: string, path: string, body: string, signal: AbortSignal): Promise<CallOutcome> {
    try {
      const response = await this.pool(origin).request({
        path,
        method: "POST",
        headers: { "content-type": "application/json", "x-openrtb-version": "2.5" },
        body,
        signal,
      });
      if (response.statusCode === 204) {
        discard(response.body);
        return { kind: "no-bid", detail: "HTTP 204" };
      }
      if (response.statusCode !== 200) {
        discard(response.body);
        return { kind: "fault", reason: "http-error", detail: `HTTP ${response.statusCode}` };
      }
      const text = await readCapped(response.body, response.headers, this.maxBodyBytes);
      if (text === undefined) return { kind: "fault", reason: "malformed-response", detail: `body over ${this.maxBodyBytes} bytes` };
      if (text.trim() === "") return { kind: "no-bid", detail: "HTTP 200 with an empty body" };
      return { kind: "answer", text };
    } catch (error) {
      const { reason, detail } = classifyError(error, signal);
      return { kind: "fault", reason, detail };
    }
  }

  /** GETs a notice URL; resolves with the status and (capped) body text, throws on network failure. */
  async get(url: URL, signal: AbortSignal, readBody: boolean): Promise<{ status: number; text?: string }> {
    const response = await this.agent.request({ origin: url.origin, path: url.pathname + url.search, method: "GET", signal });
    if (!readBody || response.statusCode < 200 || response.statusCode >= 300) {
      discard(response.body);
      return { status: response.statusCode };
    }
    const text = await readCapped(response.body, response.headers, this.maxBodyBytes);
    return { status: response.statusCode, text };
  }

  /** Closes every pool and the agent: calls in flight get `graceMs` to finish, then are aborted. */
  async close(graceMs = 1000): Promise<void> {
    const all: Dispatcher[] = [...this.pools.values(), this.agent];
    this.pools.clear();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled(all.map((d) => d.close())), grace]);
    clearTimeout(timer);
    await Promise.allSettled(all.map((d) => d.destroy()));
  }
}
