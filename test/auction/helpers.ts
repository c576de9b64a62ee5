/**
 * Test helpers of the exchange: configurable fake bidders on loopback, a memory fact sink, an
 * exchange app built per test, and small bid request builders.
 */
import { SealKeyRing, sealKey } from "../../service/auction/token-seal.js";
import { performance } from "node:perf_hooks";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { Pool } from "undici";
import { auctionRules } from "@adxkit/bindings";
import { registerExchange, type BidderConfig } from "../../service/auction/index.js";
import type { ExchangeOptions } from "../../service/auction/exchange.js";
import type { LagClock } from "../../service/auction/overload.js";
import type { CountedBillingToken, Fact } from "../../service/events/facts.js";
import type { IngestOptions, RecoveryState } from "../../service/store/store.js";

/** What a fake bidder does with one bid request. */
export interface FakeAction {
  /** HTTP status (default 200, or 204 when there is no body). */
  status?: number;
  /** JSON body (an object) or raw text (a string). */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Destroy the connection instead of answering. */
  reset?: boolean;
  /** Never answer. */
  hang?: boolean;
  /** Answer once this settles (an answer the test keeps back as long as it needs). */
  hold?: Promise<unknown>;
}

export type FakeBehaviour = (request: any, calls: number) => FakeAction | Promise<FakeAction>;

export interface FakeBidder {
  url: string;
  endpoint: string;
  /** Bid requests received, parsed. */
  requests: any[];
  /** Query strings of the win and billing notices received. */
  wins: Record<string, string>[];
  bills: Record<string, string>[];
  /**
   * Set what GET /win answers: status, headers and body (the markup of a bid without adm), after
   * `delayMs`, or once `hold` settles (a notice the test keeps in flight as long as it needs).
   */
  winAnswer: { status: number; body?: string; delayMs?: number; headers?: Record<string, string>; hold?: Promise<unknown> };
  /** Set what GET /bill answers. */
  billAnswer: { status: number };
  /** Connections accepted, and those closed since. */
  connections: { opened: number; closed: number };
  behave(behaviour: FakeBehaviour): void;
  close(): Promise<void>;
}

/** Starts a fake bidder on 127.0.0.1:0. */
export async function startFakeBidder(behaviour: FakeBehaviour = () => ({ status: 204 })): Promise<FakeBidder> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  let current = behaviour;
  const fake: Partial<FakeBidder> & { requests: any[]; wins: any[]; bills: any[] } = {
    requests: [],
    wins: [],
    bills: [],
    winAnswer: { status: 200 },
    billAnswer: { status: 200 },
    connections: { opened: 0, closed: 0 },
  };
  app.server.on("connection", (socket) => {
    fake.connections!.opened++;
    socket.once("close", () => fake.connections!.closed++);
  });
  app.post("/bid", async (request: FastifyRequest, reply: FastifyReply) => {
    fake.requests.push(request.body);
    const action = await current(request.body, fake.requests.length);
    if (action.delayMs) await sleep(action.delayMs);
    if (action.hold) await action.hold;
    if (action.reset) {
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }
    if (action.hang) {
      reply.hijack();
      return;
    }
    if (action.body === undefined) return reply.code(action.status ?? 204).send();
    reply.code(action.status ?? 200);
    if (typeof action.body === "string") return reply.type("application/json").send(action.body);
    return reply.type("application/json").send(JSON.stringify(action.body));
  });
  app.get("/win", async (request, reply) => {
    fake.wins.push({ ...(request.query as Record<string, string>) });
    const { delayMs, hold } = fake.winAnswer!;
    if (delayMs) await sleep(delayMs);
    if (hold) await hold;
    reply.code(fake.winAnswer!.status);
    if (fake.winAnswer!.headers) reply.headers(fake.winAnswer!.headers);
    return fake.winAnswer!.body === undefined ? reply.send() : reply.type("text/plain").send(fake.winAnswer!.body);
  });
  app.get("/bill", async (request, reply) => {
    fake.bills.push({ ...(request.query as Record<string, string>) });
    return reply.code(fake.billAnswer!.status).send();
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  return Object.assign(fake, {
    url,
    endpoint: `${url}/bid`,
    behave: (next: FakeBehaviour) => (current = next),
    close: () => app.close(),
  }) as FakeBidder;
}

/** A fact sink that keeps everything in memory. */
export function memorySink() {
  const facts: Fact[] = [];
  /** Spool checkpoints and counted billing tokens, as a report store keeps them with the facts. */
  const checkpoints = new Map<string, string>();
  const billingTokens: CountedBillingToken[] = [];
  return {
    facts,
    checkpoints,
    billingTokens,
    calls: 0,
    /** The options of every ingest call, in order. */
    options: [] as IngestOptions[],
    async ingest(batch: Iterable<Fact> | AsyncIterable<Fact>, options: IngestOptions = {}): Promise<number> {
      this.calls++;
      this.options.push(options);
      let n = 0;
      for await (const fact of batch as AsyncIterable<Fact>) {
        facts.push(fact);
        n++;
      }
      if (options.checkpoint) checkpoints.set(options.checkpoint.name, options.checkpoint.position);
      billingTokens.push(...(options.billingTokens ?? []));
      return n;
    },
    async recoveryState(name: string, now: number): Promise<RecoveryState> {
      return { position: checkpoints.get(name), billingTokens: billingTokens.filter((t) => t.expiresAt > now) };
    },
    /** Sum of a metric over the facts matching `where`. */
    sum(metric: "request" | "response" | "impression" | "revenue", where: Partial<Record<string, unknown>>): number {
      return facts
        .filter((f) => Object.entries(where).every(([k, v]) => (f as unknown as Record<string, unknown>)[k] === v))
        .reduce((total, f) => total + f[metric], 0);
    },
  };
}

/** The billing key ring of the test exchanges. */
export const BILLING_KEYS = new SealKeyRing([sealKey("test-billing-secret-0123456789abcdef")]);

export interface TestExchange {
  app: FastifyInstance;
  handle: ReturnType<typeof registerExchange>;
  sink: ReturnType<typeof memorySink>;
  url: string;
  /** POSTs a bid request over real HTTP (loopback); resolves with status, body and elapsed ms. */
  auction(request: unknown): Promise<{ status: number; body: any; ms: number; contentType: unknown }>;
  /** GETs a URL of the exchange (the billing address). */
  get(url: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** The public URL the test exchanges write in their burl; `get` maps it onto the listening address. */
export const PUBLIC_URL = "http://exchange.test";

/**
 * The bidders as a test's bidders file must say them: every fake bidder listens on 127.0.0.1,
 * so its notices need allow_private_addresses (unless the test sets it itself).
 */
export function onLoopback(bidders: BidderConfig[]): BidderConfig[] {
  return bidders.map((bidder) => ({ allow_private_addresses: true, ...bidder }));
}

/** Builds and starts an exchange on 127.0.0.1:0 with the given bidders (onLoopback). */
export async function startExchange(bidders: BidderConfig[], options: Partial<ExchangeOptions> = {}): Promise<TestExchange> {
  const app = Fastify({ logger: false });
  const sink = memorySink();
  // Open unless the test hands it auction keys: most tests are about something else than who calls.
  const handle = registerExchange(app, { bidders: onLoopback(bidders), sink, billingKeys: BILLING_KEYS, publicUrl: PUBLIC_URL, flushMs: 50, openAuction: options.auctionKeys === undefined, ...options });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const dispatcher = new Pool(url, { connections: 16 });
  return {
    app,
    handle,
    sink,
    url,
    async auction(request) {
      const started = performance.now();
      const response = await dispatcher.request({ path: "/openrtb2/auction", method: "POST", headers: { "content-type": "application/json" }, body: typeof request === "string" ? request : JSON.stringify(request) });
      const text = await response.body.text();
      return { status: response.statusCode, body: text === "" ? undefined : JSON.parse(text), ms: performance.now() - started, contentType: response.headers["content-type"] };
    },
    async get(address) {
      const target = new URL(address, PUBLIC_URL);
      const response = await dispatcher.request({ path: target.pathname + target.search, method: "GET" });
      const text = await response.body.text();
      return { status: response.statusCode, body: text === "" ? undefined : JSON.parse(text) };
    },
    async close() {
      await dispatcher.close();
      await app.close();
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The budget of an auction whose bidders are expected to answer: the longest tmax an auction
 * runs with (x-adxkit-auction max-tmax-ms). Bidders on loopback answer well within it even on a
 * loaded machine, and an auction whose bidders all answer ends then, not at its tmax.
 */
export const GENEROUS_TMAX: number = auctionRules.maxTmaxMs;

/**
 * The tmax of a test that waits out a deadline (a bidder or a nurl that never answers in time):
 * long enough for the prompt bidders on a loaded machine, short enough to keep the test quick.
 */
export const SHORT_TMAX = 1000;

/**
 * How long a wait for something that does happen may take before the test fails: generous, so
 * that a loaded machine only makes the test slower, never red.
 */
export const PATIENCE_MS = 20_000;

/** A promise and the function that settles it: a fake answer the test releases when it chooses. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function waitFor(check: () => boolean, timeoutMs = PATIENCE_MS, what = "condition"): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Polls an async `probe` until `done(value)` or `timeoutMs` passes; returns the last value. */
export async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = PATIENCE_MS, what = "condition"): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

let counter = 0;
/** A fresh request id. */
export function requestId(): string {
  return `req-${process.pid}-${++counter}`;
}

/** A banner bid request with one imp and a generous tmax (GENEROUS_TMAX); `overrides` and `imp` change it. */
export function bannerRequest(overrides: Record<string, unknown> = {}, imp: Record<string, unknown> = {}): any {
  return {
    id: requestId(),
    tmax: GENEROUS_TMAX,
    imp: [{ id: "1", tagid: "placement-1", bidfloor: 0.5, banner: { w: 320, h: 50 }, ...imp }],
    app: { id: "app-1", bundle: "com.example.game", publisher: { id: "pub-1" } },
    device: { os: "Android", geo: { country: "USA" }, ip: "192.0.2.1" },
    ...overrides,
  };
}

export const HTML = '<div><a href="https://advertiser.example"><img src="https://cdn.example/ad.png"></a></div>';
export const VAST = '<?xml version="1.0"?><VAST version="3.0"><Ad id="1"><InLine><AdSystem>x</AdSystem><AdTitle>t</AdTitle><Impression><![CDATA[https://t.example/i]]></Impression><Creatives/></InLine></Ad></VAST>';
export const NATIVE = JSON.stringify({ ver: "1.2", assets: [{ id: 1, title: { text: "Hello" } }], link: { url: "https://advertiser.example" } });
export const NATIVE_REQUEST = JSON.stringify({ ver: "1.2", assets: [{ id: 1, required: 1, title: { len: 90 } }] });

/** A bid response answering `request` with the given bids under one seat. */
export function answer(request: any, bids: Record<string, unknown>[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: request.id, seatbid: [{ seat: "seat-a", bid: bids }], ...extra };
}

let bidCounter = 0;
/** A banner bid on imp "1" at `price`. */
export function bid(price: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: `bid-${++bidCounter}`, impid: "1", price, adm: HTML, adomain: ["advertiser.example"], crid: "cr-1", ...fields };
}

/** A clock for the loop-lag probe that the test drives: `set` moves time, `tick` runs the probe's timer. */
export function manualLagClock(start = 1_000) {
  let now = start;
  let busy = 0;
  let tick: (() => void) | undefined;
  const clock: LagClock = {
    now: () => now,
    every(_ms, fn) {
      tick = fn;
      return { stop: () => (tick = undefined) };
    },
    busyMs: () => busy,
  };
  return {
    clock,
    now: () => now,
    set(ms: number) {
      now = ms;
    },
    /** The loop was busy `ms` more (its utilisation over a window is the busy time over the window). */
    busy(ms: number) {
      busy += ms;
    },
    tick: () => tick?.(),
    stopped: () => tick === undefined,
  };
}
