/**
 * What the server's log may hold of a request. Credentials and tokens travel in query strings
 * too (the demand report's GET, the billing URL), and Fastify logs each request's URL: every
 * query parameter whose decoded name names one the spec marks `x-adxkit-secret` (generated
 * `secretParameters`: `token`, `x-authorization`) is written as [Redacted] in every logged URL.
 * Header credentials are never logged (the request serializer holds no headers).
 */
import type { FastifyRequest, FastifyServerOptions } from "fastify";
import { secretParameters } from "@adxkit/bindings/fastify";

/** The words of the secret parameters' names (`token`, `authorization`): a name holding one of them is secret. */
const secretWords: readonly string[] = secretParameters.query.map((name) => name.toLowerCase().replace(/^x-/, "").replace(/[^a-z0-9]/g, ""));

/**
 * A parameter name as letters and digits only, its percent-escapes decoded one by one (an
 * invalid escape does not stop the rest): `x-authorization[]`, `X_Authorization`,
 * `x-authorization%00` and `%74oken` all read as what they name.
 */
function nameLetters(raw: string): string {
  return raw
    .replace(/\+/g, " ")
    .replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
}

/** Whether a query parameter's name names a secret: near misses (`token[]`, `auth_token`) count, they may carry one. */
export function isSecretParameterName(raw: string): boolean {
  const letters = nameLetters(raw);
  return secretWords.some((word) => letters.includes(word));
}

/** `url` with the value of every query parameter naming a secret replaced by [Redacted] (names compared decoded, as the server reads them). */
export function redactUrl(url: string): string {
  const query = url.indexOf("?");
  if (query === -1) return url;
  const pairs = url.slice(query + 1).split("&");
  let changed = false;
  for (let i = 0; i < pairs.length; i++) {
    const eq = pairs[i].indexOf("=");
    const name = eq === -1 ? pairs[i] : pairs[i].slice(0, eq);
    if (isSecretParameterName(name)) {
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
