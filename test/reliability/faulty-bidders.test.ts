/**
 * Reliability against faulty bidders (one per fault: hangs, answers late, resets, HTTP 500,
 * non-JSON, a valid answer for another request id, megabytes of garbage with and without a
 * Content-Length): every auction is answered with the good bid, never waiting for the hanging
 * bidder nor taking the slow one's higher bid, each fault is counted per bidder under its exact
 * reason, memory stays flat over a bounded loop, and a bidder that keeps failing is skipped by its
 * circuit breaker, then probed and taken back (injected clock, and a probe held in flight).
 *
 * Nothing here depends on the machine's speed: the good bidder and the faulty ones that answer
 * get the longest tmax (they answer well within it, even on a loaded machine), and the hanging
 * and the slow bidder a `timeout_ms` of CUT_MS, whose expiry is always due before the slow
 * bidder's answer (timers of one process fire in order). Answer times are printed, not asserted
 * (bench/auction.ts measures them).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CircuitBreaker } from "../../service/auction/circuit-breaker.js";
import { HTML, bannerRequest, gate, startExchange, waitFor, type TestExchange } from "../auction/helpers.js";

/** The time the hanging and the slow bidder get (their timeout_ms): the auctions end soon after it. */
const CUT_MS = 50;
/** When the slow bidder answers (with the higher bid): long after its CUT_MS. */
const SLOW_MS = 20 * CUT_MS;

type Handler = (request: any, raw: IncomingMessage, res: ServerResponse) => void;

interface RawBidder {
  endpoint: string;
  calls: number;
  handler: Handler;
  close(): Promise<void>;
}

/** A bidder on node:http (full control over the bytes), the body parsed when it is JSON. */
async function rawBidder(handler: Handler): Promise<RawBidder> {
  const bidder = { calls: 0, handler } as RawBidder;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bidder.calls++;
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = undefined;
      }
      bidder.handler(body, req, res);
    });
  });
  server.on("clientError", (_e, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  bidder.endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}/bid`;
  bidder.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return bidder;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
};
const goodAnswer = (request: any, price = 1.2, crid = "good") => ({
  id: request.id,
  cur: "USD",
  seatbid: [{ seat: "seat-good", bid: [{ id: `b-${request.id}`, impid: "1", price, adm: HTML, adomain: ["advertiser.example"], crid }] }],
});

/** Streams `megabytes` of garbage without a Content-Length, stopping when the peer goes away. */
function streamGarbage(res: ServerResponse, megabytes: number): void {
  res.writeHead(200, { "content-type": "application/json" });
  const chunk = Buffer.alloc(64 * 1024, "x");
  let left = (megabytes * 1024 * 1024) / chunk.length;
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      left--;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    if (!res.destroyed) res.end();
  };
  res.on("close", () => (left = 0));
  pump();
}

const TWO_MIB = Buffer.alloc(2 * 1024 * 1024, "{");

/** A fault per bidder; `expected` is the reason each one must be counted under. */
const FAULTS: Record<string, { handler: Handler; expected: string }> = {
  hang: { handler: () => {}, expected: "timeout" },
  slow: { handler: (r, _q, res) => void setTimeout(() => !res.destroyed && json(res, 200, goodAnswer(r, 9, "slow")), SLOW_MS), expected: "timeout" },
  reset: { handler: (_r, req) => req.socket.destroy(), expected: "connection-error" },
  http500: { handler: (_r, _q, res) => json(res, 500, { error: "boom" }), expected: "http-error" },
  "non-json": { handler: (_r, _q, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>not json</html>"), expected: "malformed-response" },
  "other-id": { handler: (r, _q, res) => json(res, 200, { ...goodAnswer(r, 9, "other"), id: `not-${r?.id}` }), expected: "wrong-request-id" },
  "garbage-stream": { handler: (_r, _q, res) => streamGarbage(res, 4), expected: "malformed-response" },
  "garbage-sized": {
    handler: (_r, _q, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": TWO_MIB.length }).end(TWO_MIB);
    },
    expected: "malformed-response",
  },
};

/** A gc function: global.gc when node runs with --expose-gc, else one obtained through V8 flags (or none). */
function gcFunction(): (() => void) | undefined {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === "function") return g;
  try {
    setFlagsFromString("--expose-gc");
    const fn = runInNewContext("gc") as unknown;
    return typeof fn === "function" ? (fn as () => void) : undefined;
  } catch {
    return undefined;
  }
}

let good: RawBidder;
const faulty: Record<string, RawBidder> = {};
let ex: TestExchange;

beforeAll(async () => {
  good = await rawBidder((r, _q, res) => json(res, 200, goodAnswer(r)));
  for (const [id, { handler }] of Object.entries(FAULTS)) faulty[id] = await rawBidder(handler);
  // The breaker is off here: every auction must reach every faulty bidder, so the counters are exact.
  ex = await startExchange(
    [
      { id: "good", endpoint: good.endpoint, seat: "seat-good" },
      ...Object.keys(FAULTS).map((id) => ({ id, endpoint: faulty[id].endpoint, seat: `seat-${id}`, ...(FAULTS[id].expected === "timeout" ? { timeout_ms: CUT_MS } : {}) })),
    ],
    { circuitBreaker: false },
  );
});
afterAll(async () => {
  await ex?.close();
  await Promise.all([good, ...Object.values(faulty)].filter(Boolean).map((b) => b.close()));
});

describe("faulty bidders", () => {
  test("every auction is answered with the good bid, never waiting for the hanging or the slow bidder; each fault is counted under its bidder", async () => {
    // Warm-up (connections, JIT), not counted below.
    for (let i = 0; i < 3; i++) await ex.auction(bannerRequest());
    const base = ex.handle.stats();
    const rounds = 20;
    const times: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const res = await ex.auction(bannerRequest());
      expect(res.status).toBe(200);
      expect(res.body.seatbid).toHaveLength(1);
      expect(res.body.seatbid[0].bid[0].crid).toBe("good");
      times.push(res.ms);
    }
    const sorted = [...times].sort((a, b) => a - b);
    console.log(`faulty bidders: ${rounds} auctions, the hanging and the slow bidder cut at ${CUT_MS} ms: p50 ${sorted[rounds >> 1].toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`);

    const stats = ex.handle.stats();
    expect(stats.auctions - base.auctions).toBe(rounds);
    expect(stats.bidders.good.faults).toEqual({});
    expect(stats.bidders.good.wins - base.bidders.good.wins).toBe(rounds);
    for (const [id, { expected }] of Object.entries(FAULTS)) {
      const before = base.bidders[id];
      expect(stats.bidders[id].requests - before.requests, id).toBe(rounds);
      // Each call is counted once, under its reason.
      const faults = stats.bidders[id].faults;
      expect(Object.keys(faults), id).toEqual([expected]);
      expect((faults[expected as "timeout"] ?? 0) - (before.faults[expected as "timeout"] ?? 0), id).toBe(rounds);
      expect(stats.bidders[id].wins, id).toBe(0);
    }
    expect(stats.circuits).toEqual({});
  });

  test("memory stays flat over 300 auctions against the worst bidders", { timeout: 120_000 }, async () => {
    const gc = gcFunction();
    const heap = () => {
      if (gc) {
        gc();
        gc();
      }
      return process.memoryUsage().heapUsed;
    };
    let worst = 0;
    const batch = async (n: number, concurrency: number) => {
      for (let done = 0; done < n; done += concurrency) {
        const results = await Promise.all(Array.from({ length: Math.min(concurrency, n - done) }, () => ex.auction(bannerRequest())));
        for (const r of results) {
          expect(r.status).toBe(200);
          expect(r.body.seatbid[0].bid[0].crid).toBe("good");
          worst = Math.max(worst, r.ms);
        }
      }
    };
    await batch(30, 5); // warm-up: pools, JIT, caches
    const before = heap();
    const base = ex.handle.stats();
    worst = 0;
    await batch(300, 5);
    // Let the aborted sockets and the fact flush settle before measuring.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = heap();
    const growthMiB = (after - before) / 1024 / 1024;
    const bound = gc ? 16 : 64;
    console.log(`faulty bidders: 300 auctions (5 concurrent): heap ${(before / 1048576).toFixed(1)} → ${(after / 1048576).toFixed(1)} MiB (${growthMiB >= 0 ? "+" : ""}${growthMiB.toFixed(1)} MiB, gc ${gc ? "yes" : "no"}, bound ${bound} MiB); slowest ${worst.toFixed(1)} ms`);
    expect(growthMiB).toBeLessThan(bound);
    // Every call to a faulty bidder is a fault, under its own reason.
    const stats = ex.handle.stats();
    expect(stats.bidders.good.wins - base.bidders.good.wins).toBe(300);
    for (const [id, { expected }] of Object.entries(FAULTS)) {
      const { faults, requests } = stats.bidders[id];
      expect(requests - base.bidders[id].requests, id).toBe(300);
      expect(faults, id).toEqual({ [expected]: requests });
    }
  });
});

describe("circuit breaker", () => {
  test("opens after the threshold, skips, probes after the cooldown, closes on success", () => {
    let now = 1_000;
    const breaker = new CircuitBreaker({ threshold: 3, cooldownMs: 5000, clock: () => now });
    for (let i = 0; i < 2; i++) {
      expect(breaker.allow()).toBe(true);
      breaker.failure();
    }
    breaker.success(); // a success resets the count
    for (let i = 0; i < 3; i++) {
      expect(breaker.allow()).toBe(true);
      breaker.failure();
    }
    expect(breaker.state).toBe("open");
    expect(breaker.allow()).toBe(false);
    now += 4999;
    expect(breaker.allow()).toBe(false);
    now += 1;
    expect(breaker.state).toBe("half-open");
    expect(breaker.allow()).toBe(true); // the probe
    expect(breaker.allow()).toBe(false); // one probe at a time
    breaker.failure(); // the probe failed: open again
    expect(breaker.snapshot()).toMatchObject({ state: "open", opened: 2, skipped: 3 });
    now += 5000;
    expect(breaker.allow()).toBe(true);
    breaker.success();
    expect(breaker.snapshot()).toMatchObject({ state: "closed", consecutiveFaults: 0, opened: 2 });
    expect(breaker.allow()).toBe(true);
  });

  test("a probe that never settles is replaced after another cooldown", () => {
    let now = 0;
    const breaker = new CircuitBreaker({ threshold: 1, cooldownMs: 100, clock: () => now });
    breaker.failure();
    now = 100;
    expect(breaker.allow()).toBe(true);
    now = 150;
    expect(breaker.allow()).toBe(false);
    now = 200;
    expect(breaker.allow()).toBe(true);
  });

  test("in the exchange: a failing bidder is skipped for the cooldown, probed, and taken back", async () => {
    let now = 0;
    let mode: "fail" | "held-ok" | "ok" = "fail";
    const probe = gate();
    const flaky = await rawBidder((r, _q, res) => {
      if (mode === "fail") return json(res, 500, "down");
      const answer = () => json(res, 200, goodAnswer(r, 2, "flaky"));
      if (mode === "held-ok") void probe.promise.then(answer);
      else answer();
    });
    const local = await startExchange(
      [
        { id: "good", endpoint: good.endpoint, seat: "seat-good" },
        { id: "flaky", endpoint: flaky.endpoint, seat: "seat-flaky" },
      ],
      { circuitBreaker: { threshold: 10, cooldownMs: 5000, clock: () => now } },
    );
    const circuit = () => local.handle.stats().circuits.flaky;
    const run = async () => {
      const res = await local.auction(bannerRequest());
      expect(res.status).toBe(200);
      return res.body.seatbid[0].bid[0].crid as string;
    };
    try {
      for (let i = 0; i < 10; i++) await run();
      expect(flaky.calls).toBe(10);
      expect(local.handle.stats().bidders.flaky.faults).toEqual({ "http-error": 10 });
      expect(circuit()).toEqual({ state: "open", consecutiveFaults: 10, opened: 1, skipped: 0 });

      // Open: skipped, not called, not counted as requests or faults; the good bidder still wins.
      for (let i = 0; i < 5; i++) expect(await run()).toBe("good");
      expect(flaky.calls).toBe(10);
      expect(circuit()).toMatchObject({ state: "open", skipped: 5 });
      expect(local.handle.stats().bidders.flaky.requests).toBe(10);

      // After the cooldown one probe goes out; it fails: open again for another cooldown.
      now += 5000;
      expect(circuit().state).toBe("half-open");
      await run();
      expect(flaky.calls).toBe(11);
      expect(circuit()).toMatchObject({ state: "open", opened: 2, skipped: 5 });
      await run();
      expect(flaky.calls).toBe(11);

      // Next cooldown: the bidder has recovered. While the probe is in flight (its answer held
      // until both auctions have chosen their bidders), the other auction skips it.
      now += 5000;
      mode = "held-ok";
      const auctions = local.handle.stats().auctions;
      const both = Promise.all([run(), run()]);
      await waitFor(() => local.handle.stats().auctions === auctions + 2, undefined, "both auctions under way");
      probe.open();
      const [a, b] = await both;
      expect(flaky.calls).toBe(12);
      expect([a, b].sort()).toEqual(["flaky", "good"]);
      expect(circuit()).toEqual({ state: "closed", consecutiveFaults: 0, opened: 2, skipped: 7 });

      // Closed: every auction calls it again.
      mode = "ok";
      for (let i = 0; i < 3; i++) expect(await run()).toBe("flaky");
      expect(flaky.calls).toBe(15);
      expect(local.handle.stats().bidders.flaky.requests).toBe(15);
    } finally {
      await local.close();
      await flaky.close();
    }
  });
});
