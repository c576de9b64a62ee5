/**
 * What the server's log may hold of a request. Credentials and tokens travel in query strings
 * too (the demand report's GET, the billing URL), and Fastify logs each request's URL: the
 * parameters the spec marks `x-adxkit-secret` (generated `secretParameters`) are written as
 * [Redacted] in every logged URL. Header credentials are never logged (the request serializer
 * holds no headers).
 */
import type { FastifyRequest, FastifyServerOptions } from "fastify";
import { secretParameters } from "@adxkit/bindings/fastify";

const secretQuery: ReadonlySet<string> = new Set(secretParameters.query);

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " ")).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/** `url` with the value of every secret query parameter replaced by [Redacted] (names compared decoded, as the server reads them). */
export function redactUrl(url: string): string {
  const query = url.indexOf("?");
  if (query === -1) return url;
  const pairs = url.slice(query + 1).split("&");
  let changed = false;
  for (let i = 0; i < pairs.length; i++) {
    const eq = pairs[i].indexOf("=");
    const name = eq === -1 ? pairs[i] : pairs[i].slice(0, eq);
    if (secretQuery.has(decodedName(name))) {
      pairs[i] = `${name}=[Redacted]`;
      changed = true;
    }
  }
  return changed ? `${url.slice(0, query + 1)}${pairs.join("&")}` : url;
}

/** Fastify's request serializer with the URL redacted. */
export function loggedRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    version: request.headers?.["accept-version"],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** Logger options with the redacting request serializer (false stays false). */
export function redactingLogger(logger: FastifyServerOptions["logger"]): FastifyServerOptions["logger"] {
  if (logger === undefined || logger === false) return false;
  const options = logger === true ? {} : logger;
  return { ...options, serializers: { ...options.serializers, req: loggedRequest as never } };
}
