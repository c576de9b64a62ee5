/**
 * The server every bad-input test file throws its input at: the real app (Fastify inject) on an
 * in-memory store whose facts hold hostile strings, two publishers, one demand account, one
 * bidder that counts its calls.
 *
 * Speed: credentials are verified by a DuckDB lookup (~2 ms); the app gets the real store with
 * verifyCredentials memoised for the test's valid credentials, so a run costs an inject, not a
 * query. Wrong credentials still go through the real lookup.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, expect } from "vitest";
import type { FastifyInstance } from "fastify";
import { reportStatusMessage, validators } from "@adxkit/bindings";
import { buildApp } from "../../../service/app.js";
import { SealKeyRing, sealKey } from "../../../service/auction/token-seal.js";
import { registerExchange, type ExchangeHandle } from "../../../service/auction/index.js";
import { openStore } from "../../../service/store/index.js";
import type { Account, Fact, ReportStore } from "../../../service/store/store.js";
import type { Case } from "./arbitraries.js";

export const A = "/api/report/demand_report_v2";
export const B = "/api/report/v1";
export const AUCTION = "/openrtb2/auction";

/** Runs per endpoint (each ≥ 10,000 in total across the files). */
export const RUNS = { mixed: 9_400, credentials: 300, oversized: 300, filters: 400, billing: 10_000 } as const;
/**
 * A property of thousands of runs takes about 7 s alone and up to 111 s beside two CPU-bound
 * processes (`npm run test:busy`): each suite gets its own timeout, far above that, so its
 * outcome never depends on the machine's speed.
 */
export const SUITE_TIMEOUT = { timeout: 600_000 };
export const BILLING_KEYS = new SealKeyRing([sealKey("bad-input-test-secret-0123456789abcdef")]);

/** Hostile strings the facts hold as app bundles and placements (filters must match them literally). */
export const nasty = [
  "pl-1",
  "com.example.app",
  "x' OR '1'='1",
  "'; DROP TABLE facts; --",
  'a"b\\c',
  "%",
  "_",
  "pl-%",
  "com.example.%",
  "line\nbreak\ttab\u0001\u001f\u007f",
  "$1",
  "?",
  "ünïcödé ✓ \u{1F600}",
  " leading and trailing ",
  "",
];

export const facts: Fact[] = [];
for (const [i, value] of nasty.entries()) {
  for (const publisher_id of ["pub-1", "pub-2"]) {
    facts.push({ side: "supply", date_hour: "2026-10-01T05:00:00", publisher_id, app_bundle_id: value, placement_id: nasty[(i + 3) % nasty.length], ad_format: 1, platform: 2, country: "USA", request: publisher_id === "pub-1" ? i + 1 : 1000 + i, response: 0, impression: 0, revenue: 0 });
  }
}
facts.push({ side: "demand", date_hour: "2026-10-01T05:00:00", bidder_id: "dsp-1", ad_format: 1, platform: 2, request: 10, response: 5, impression: 1, revenue: 0.5 });

type Who = "demand" | "supply";

/** The app and what the tests read of it; filled in by the file's beforeAll. */
export interface BadInputServer {
  app: FastifyInstance;
  exchange: ExchangeHandle;
  creds: Record<Who, { userid: string; authorization: string }>;
  /** Requests the bidder received so far. */
  bidderCalls: number;
}

/** The real store, with verifyCredentials memoised (valid credentials are checked once). */
function memoisedCredentials(real: ReportStore, creds: BadInputServer["creds"]): ReportStore {
  const cache = new Map<string, Promise<Account | null>>();
  const known = () => new Set(Object.values(creds).map((c) => `${c.userid}\u0000${c.authorization}`));
  let valid: Set<string> | undefined;
  const verify = (userid: string, authorization: string) => {
    const key = `${userid}\u0000${authorization}`;
    valid ??= known();
    if (!valid.has(key)) return real.verifyCredentials(userid, authorization);
    let hit = cache.get(key);
    if (hit === undefined) cache.set(key, (hit = real.verifyCredentials(userid, authorization)));
    return hit;
  };
  return new Proxy(real, {
    get(target, property) {
      if (property === "verifyCredentials") return verify;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Starts the server before the file's tests and closes it after them. */
export function useBadInputServer(): BadInputServer {
  const server = { creds: {}, bidderCalls: 0 } as BadInputServer;
  let store: ReportStore | undefined;
  let bidder: Server | undefined;
  beforeAll(async () => {
    store = await openStore({ db: ":memory:" });
    await store.ingest(facts);
    server.creds.demand = await store.createAccount({ side: "demand", bidder_id: "dsp-1" });
    server.creds.supply = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
    bidder = createServer((request, response) => {
      server.bidderCalls++;
      request.resume();
      request.on("end", () => response.writeHead(204).end());
    });
    await new Promise<void>((resolve) => bidder?.listen(0, "127.0.0.1", resolve));
    const port = (bidder.address() as { port: number }).port;
    server.app = await buildApp({
      store: memoisedCredentials(store, server.creds),
      extend: (instance) => {
        server.exchange = registerExchange(instance, {
          bidders: [{ id: "dsp-1", endpoint: `http://127.0.0.1:${port}/bid`, seat: "seat-1" }],
          sink: { ingest: async () => 0 },
          billingKeys: BILLING_KEYS,
          publicUrl: "http://exchange.test",
          openAuction: true,
        });
      },
    });
  });
  afterAll(async () => {
    await server.app?.close();
    await server.exchange?.close();
    await new Promise((resolve) => bidder?.close(resolve));
    await store?.close();
  });
  return server;
}

/** Every report answer: HTTP 200, the envelope, valid against the response schema. */
export function envelope(path: string, statusCode: number, text: string): { status: { code: number; msg: string; detail?: string }; data: any } {
  expect(statusCode).toBe(200);
  const body = JSON.parse(text);
  const kind = path === A ? "demand-report-response" : "supply-report-response";
  expect(validators[kind](body).errors).toEqual([]);
  expect(body.status.msg).toBe(reportStatusMessage(body.status.code));
  return body;
}

export function headersOf(server: BadInputServer, who: Who, contentType = "application/json") {
  return { "content-type": contentType, "x-userid": server.creds[who].userid, "x-authorization": server.creds[who].authorization };
}

/** A report request as `who`, answered in the envelope. */
export async function postReport(server: BadInputServer, path: string, who: Who, c: Case) {
  const response = await server.app.inject({ method: "POST", url: path, headers: headersOf(server, who, c.contentType), payload: c.payload });
  return envelope(path, response.statusCode, response.body);
}
