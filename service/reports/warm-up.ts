/**
 * Warming the report route before the server listens. A fresh server's first report requests run
 * Fastify's route, the validators, the handler and the store's JS before V8 has optimised them:
 * a month total cost the event loop 6.2–8.6 ms of CPU in each of a fresh server's first 21
 * requests, 2.4–2.9 ms after 200 requests through `inject` at startup, 1.8 ms warm
 * (docs/benchmarks.md, "The read side, part twelve"). So a server sends itself a few hundred
 * report requests through `inject` (no socket) before it listens, as the account below: one
 * made up here, known to no store, valid only until the warm-up ends. Its publisher exists in no
 * dictionary, so the store runs every statement on an empty scope and answers zeros.
 */
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { Account } from "../store/store.js";

/** The warm-up's account and credentials while it runs; `current` is cleared when it ends. */
export interface WarmUpAccess {
  current?: { userid: string; authorization: string; account: Account };
  /** The made-up userid of the last warm-up, kept so that its requests' log lines stay at debug. */
  userid?: string;
}

/** A request of the warm-up (its log lines are at debug, not 400 lines at info per start). */
export const isWarmUpRequest = (access: WarmUpAccess, headers: Record<string, unknown>): boolean => access.userid !== undefined && headers["x-userid"] === access.userid;

/** The publisher of the warm-up's account: never a real one (publisher ids of the interface have no spaces). */
export const WARM_UP_PUBLISHER = "adxkit warm-up";

/** The warm-up stops after this long even if it sent fewer requests (a slow store). */
const WARM_UP_MAX_MS = 5_000;

/** The requests sent in turn: the month total and a month by date × country, the two small reports of issue 18. */
function warmUpBodies(now: Date): object[] {
  const month = now.toISOString().slice(0, 7);
  const range = { start: `${month}-01T00:00:00`, end: `${month}-02T23:59:59` };
  return [
    { ...range, metrics: ["revenue", "request", "response", "impression", "fill_rate"] },
    { ...range, dimensions: ["date", "country"], metrics: ["revenue", "impression", "ecpm"], limit: 1000 },
  ];
}

/**
 * Sends `requests` report requests (at most 5 s of them) to the supply report route through
 * `inject`, as a made-up account allowed through `access` meanwhile; returns how many were
 * answered with status 0. Never throws: a warm-up that fails leaves a slower first request, no
 * server that does not start.
 */
export async function warmUpReports(app: FastifyInstance, access: WarmUpAccess, requests: number): Promise<number> {
  if (requests <= 0) return 0;
  const userid = `warm-up-${randomBytes(8).toString("hex")}`;
  const authorization = randomBytes(32).toString("base64url");
  access.userid = userid;
  access.current = { userid, authorization, account: { userid, side: "supply", publisher_ids: [WARM_UP_PUBLISHER], legacy: false, placement_dimensions: false, created_at: new Date().toISOString(), revoked: false } };
  const bodies = warmUpBodies(new Date());
  const headers = { "content-type": "application/json", "x-userid": userid, "x-authorization": authorization };
  const until = performance.now() + WARM_UP_MAX_MS;
  let answered = 0;
  try {
    for (let i = 0; i < requests && performance.now() < until; i++) {
      const response = await app.inject({ method: "POST", url: "/api/report/v1", headers, payload: bodies[i % bodies.length] });
      if (response.statusCode === 200 && response.body.includes('"code":0,')) answered++;
    }
  } catch (error) {
    app.log.warn({ err: error }, "the report route's warm-up stopped");
  } finally {
    access.current = undefined;
  }
  return answered;
}
