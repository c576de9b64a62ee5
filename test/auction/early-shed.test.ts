// Load shedding in front of Fastify (service/auction/early-shed.ts): an auction the admission rate
// has no room for is answered 204 overloaded from Node's request event, so no Fastify hook sees
// it; its x-request-id is the caller's (or a new one). The shed still comes after the key check:
// a key the table does not hold goes to Fastify and gets its 401. An auction admitted there runs
// through Fastify with the account found there, and gives its place back when answered.
// No timing decides these: the admission rate is fixed (an injected clock whose windows never end).
import { once } from "node:events";
import { connect } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { registerExchange, type ExchangeHandle } from "../../service/auction/index.js";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { answer, bannerRequest, bid, BILLING_KEYS, eventually, manualLagClock, memorySink, onLoopback, PUBLIC_URL, startFakeBidder, type FakeBidder } from "./helpers.js";

/** One HTTP/1.1 request on a connection of its own; the status and the headers asked for. */
async function send(port: number, head: string, body = ""): Promise<{ status: number; headers: Record<string, string> }> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  let text = "";
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => (text += chunk));
  const ended = once(socket, "end");
  socket.write(`${head}\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  await ended;
  const headers: Record<string, string> = {};
  for (const line of text.split("\r\n\r\n")[0].split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), headers };
}

/** An exchange whose admission rate is `inFlightMin` auctions in flight and no more (a rate of 0), with a hook counting what reaches Fastify. */
async function exchangeBehind(options: { inFlightMin: number; auctionKeys?: ReportStore }) {
  const app: FastifyInstance = Fastify({ logger: false });
  const seen: string[] = [];
  app.addHook("onRequest", (request, _reply, done) => {
    seen.push(`${request.method} ${request.url}`);
    done();
  });
  const sink = memorySink();
  const handle: ExchangeHandle = registerExchange(app, {
    bidders: onLoopback([{ id: "dsp", endpoint: bidder.endpoint, seat: "s" }]),
    sink,
    billingKeys: BILLING_KEYS,
    publicUrl: PUBLIC_URL,
    flushMs: 60_000,
    ...(options.auctionKeys ? { auctionKeys: options.auctionKeys } : { openAuction: true }),
    loadShedding: { clock: manualLagClock().clock, admission: { initialRate: 0, inFlightMin: options.inFlightMin, windowMs: 1e12 } },
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, handle, sink, seen, port: (app.server.address() as { port: number }).port };
}

const auctionHead = (extra = "") => `POST /openrtb2/auction HTTP/1.1\r\ncontent-type: application/json${extra}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let bidder: FakeBidder;
let store: ReportStore;
let key: string;
beforeAll(async () => {
  bidder = await startFakeBidder((r) => ({ body: answer(r, [bid(1.5)]) }));
  store = await openStore({ db: ":memory:" });
  const { userid } = await store.createAccount({ side: "supply", publisher_ids: ["pub-1"] });
  key = (await store.issueAuctionKey(userid))!;
});
afterAll(async () => {
  await bidder?.close();
  await store?.close();
});

describe("shedding in front of Fastify", () => {
  test("a shed auction reaches no Fastify hook: 204 overloaded, the caller's x-request-id or a new one, counted overloaded; other routes still reach Fastify", async () => {
    const x = await exchangeBehind({ inFlightMin: 0 });
    try {
      const body = JSON.stringify(bannerRequest());
      const given = await send(x.port, auctionHead("\r\nx-request-id: caller-7"), body);
      expect([given.status, given.headers["x-adxkit-no-bid"], given.headers["x-request-id"]]).toEqual([204, "overloaded", "caller-7"]);
      // A query string is the same route; an id that is no short token is replaced.
      const other = await send(x.port, `POST /openrtb2/auction?x=1 HTTP/1.1\r\ncontent-type: application/json\r\nx-request-id: ${"a".repeat(65)}`, body);
      expect([other.status, other.headers["x-adxkit-no-bid"]]).toEqual([204, "overloaded"]);
      expect(other.headers["x-request-id"]).toMatch(UUID);
      expect(x.seen).toEqual([]);
      expect(bidder.requests.length).toBe(0);
      expect(x.handle.stats()).toMatchObject({ auctions: 2, overloaded: 2, noBid: 2 });
      // Not the auction's route, or not its method: Fastify answers as before.
      expect((await send(x.port, "GET /events/billing?token=x HTTP/1.1")).status).toBe(403);
      expect((await send(x.port, "POST /openrtb2/auctions HTTP/1.1\r\ncontent-type: application/json", "{}")).status).toBe(404);
      expect(x.seen).toEqual(["GET /events/billing?token=x", "POST /openrtb2/auctions"]);
    } finally {
      await x.app.close();
    }
  });

  test("an auction admitted in front of Fastify runs through it once, and gives its place back when answered", async () => {
    const x = await exchangeBehind({ inFlightMin: 1 });
    try {
      const calls = bidder.requests.length;
      const ran = await send(x.port, auctionHead(), JSON.stringify(bannerRequest()));
      expect(ran.status).toBe(200);
      expect(x.seen).toEqual(["POST /openrtb2/auction"]);
      expect(bidder.requests.length).toBe(calls + 1);
      await eventually(async () => x.handle.stats().admission!.inFlight, (n) => n === 0, undefined, "no auction in flight");
      expect(x.handle.stats()).toMatchObject({ auctions: 1, overloaded: 0, answered: 1 });
    } finally {
      await x.app.close();
    }
  });

  test("with auction keys, the shed comes after the key check: an unknown key gets Fastify's 401, a valid one is shed, or admitted as its account", async () => {
    const x = await exchangeBehind({ inFlightMin: 1, auctionKeys: store });
    try {
      const body = JSON.stringify({ ...bannerRequest(), app: { bundle: "com.example", publisher: { id: "pub-1" } } });
      const unknown = await send(x.port, auctionHead("\r\nauthorization: Bearer not-a-key"), body);
      expect(unknown.status).toBe(401);
      expect(x.seen).toEqual(["POST /openrtb2/auction"]);
      // One in flight is always admitted: held at the bidder, the next one with a valid key is shed unread.
      const held: (() => void)[] = [];
      bidder.behave((r) => new Promise((resolve) => held.push(() => resolve({ body: answer(r, [bid(1.5)]) }))));
      const calls = bidder.requests.length;
      const admitted = send(x.port, auctionHead(`\r\nauthorization: Bearer ${key}`), body);
      await eventually(async () => bidder.requests.length, (n) => n === calls + 1, undefined, "the admitted auction at the bidder");
      const shed = await send(x.port, auctionHead(`\r\nauthorization: Bearer ${key}`), body);
      expect([shed.status, shed.headers["x-adxkit-no-bid"]]).toEqual([204, "overloaded"]);
      bidder.behave((r) => ({ body: answer(r, [bid(1.5)]) }));
      for (const release of held) release();
      // The admitted one ran as the key's account: its publisher is one of the account's (else 403).
      expect((await admitted).status).toBe(200);
      expect(x.seen).toEqual(["POST /openrtb2/auction", "POST /openrtb2/auction"]);
      expect(x.handle.stats()).toMatchObject({ overloaded: 1, auth: { unauthorized: 1, forbidden: 0 } });
    } finally {
      await x.app.close();
    }
  });
});
