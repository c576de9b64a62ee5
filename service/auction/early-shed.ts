/**
 * Load shedding in front of Fastify (x-adxkit-auction overload): an auction request the admission
 * rate has no room for is answered 204 `x-adxkit-no-bid: overloaded` from Node's own request
 * event, before Fastify builds its request and reply, routes it, runs its hooks and logs it.
 * Where a shed went through Fastify it cost the exchange's main thread 151-191 µs against
 * 746-847 µs an auction (bench/auction.ts, overload row, 2026-11-27 00:13-00:20): at twice the
 * capacity the sheds alone took a third of the thread, and at most 71-75 % of the capacity could
 * run in time (docs/benchmarks.md). Its body is never read: Node discards the unread bytes of a
 * request answered on a keep-alive connection before it reads the next one.
 *
 * Every other request, and an auction request this cannot decide (a key the table does not hold
 * now, a throttled address: Exchange.admitEarly), goes to Fastify's handler as before, and its
 * onRequest hook sheds it if need be. An admitted auction carries its admission on the raw
 * request (`earlyAdmission`), so that the hook does not take a second place for it. A shed
 * logs no line of its own (thousands a second in an overload): it counts as overloaded in
 * stats() and /metrics, and in the per-second auction summary.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { requestIdOf } from "../request-id.js";
import type { EarlyAdmission, Exchange } from "./exchange.js";

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** Where the admission of a request admitted here is kept on Node's request (read by the onRequest hook). */
const ADMITTED = Symbol("adxkit.earlyAdmission");
type Marked = IncomingMessage & { [ADMITTED]?: EarlyAdmission };

/** The admission given to `request` in front of Fastify, if any (Fastify's `request.raw`). */
export function earlyAdmission(request: IncomingMessage): EarlyAdmission | undefined {
  return (request as Marked)[ADMITTED];
}

/**
 * Puts the exchange's shedding in front of `server`'s request listener (Fastify's handler, the
 * only listener of a server Fastify made). `auctionPath()` is the auction route's path, once it is
 * registered (undefined before: nothing is decided here then). False, and nothing changed, when
 * the server has another number of request listeners (a serverFactory of the caller's own):
 * there the onRequest hook alone sheds.
 */
export function shedBeforeFastify(server: Server, exchange: Exchange, shedHeaders: Readonly<Record<string, string>>, auctionPath: () => string | undefined): boolean {
  const listeners = server.listeners("request") as RequestListener[];
  if (listeners.length !== 1) return false;
  const [fastify] = listeners;
  const fixedHeaders = Object.entries(shedHeaders).flat();
  const done = () => exchange.admissionDone();
  const front: RequestListener = function (this: Server, request, response) {
    const path = request.method === "POST" ? auctionPath() : undefined;
    const url = request.url ?? "";
    // The route's path only: Fastify's router ignores the query string too.
    if (path !== undefined && url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 63 /* ? */)) {
      const admission = exchange.admitEarly(request.headers.authorization, request.socket.remoteAddress);
      if (admission === false) {
        response.writeHead(204, [...fixedHeaders, "x-request-id", requestIdOf(request.headers["x-request-id"])]);
        response.end();
        return;
      }
      if (admission !== undefined) {
        (request as Marked)[ADMITTED] = admission;
        // 'close' comes once for every response: answered, failed or its connection gone.
        response.once("close", done);
      }
    }
    fastify.call(this, request, response);
  };
  server.removeListener("request", fastify);
  server.on("request", front);
  return true;
}
