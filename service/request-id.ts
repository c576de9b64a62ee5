/**
 * A request's id (its log lines' reqId, and the x-request-id of its answer): the caller's own
 * x-request-id when it is a short token, else a new UUID. Fastify's genReqId (app.ts) and the
 * auctions shed before Fastify sees them (auction/early-shed.ts) both use it.
 */
import { randomUUID } from "node:crypto";

const GIVEN = /^[\w.-]{1,64}$/;

export function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === "string" && GIVEN.test(given) ? given : randomUUID();
}
