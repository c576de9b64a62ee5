// Load shedding, written as the overload: a request that reaches an exchange whose event loop is
// stuck is read late, and its wait counts as spent; when what is left cannot hold the bidders'
// minimum, the auction is answered 204 at once, its supply requests counted, no bidder called.
// The stall is a synchronous busy loop in the test (the exchange shares this process), so its
// length is a floor whatever the machine's speed: a slower machine only stalls longer.
// A request finding no room in the admission rate is shed before its body is read; those tests
// hold auctions at the bidder (the rate admits any while fewer than admission-in-flight-min are in
// flight) and drive the lag probe's clock and the loop's busy time (overload.ts), so no timing
// decides them.
import { once } from "node:events";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { auctionRules } from "@adxkit/bindings";
import { answer, bannerRequest, bid, eventually, GENEROUS_TMAX, manualLagClock, startExchange, startFakeBidder, type FakeBidder, type TestExchange } from "./helpers.js";

/** Keeps this process's event loop busy for `ms` (nothing else runs meanwhile). */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * Sends a bid request on a connected socket (the bytes reach the exchange's side of the
 * connection at once), then stalls this process — the exchange's event loop — for `stallMs`,
 * as an overloaded process leaves a request unread; resolves with the HTTP status.
 */
async function auctionDuringStall(exchange: TestExchange, request: unknown, stallMs: number): Promise<{ status: number; noBid?: string }> {
  const { port } = new URL(exchange.url);
  const socket = connect(Number(port), "127.0.0.1");
  await once(socket, "connect");
  const body = JSON.stringify(request);
  let answer = "";
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => (answer += chunk));
  const ended = once(socket, "end");
  socket.write(`POST /openrtb2/auction HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  stall(stallMs);
  await ended;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]), noBid: /^x-adxkit-no-bid: (.*)\r$/im.exec(answer)?.[1] };
}

/**
 * The lag probe's clock, driven by the test: `behind(ms)` makes the loop that far behind now
 * (its tick overdue), `lateTick(ms)` makes its tick run that late, and the loop on time after.
 */
function drivenClock() {
  const time = manualLagClock();
  const intervalMs = 5;
  let last = time.now();
  return {
    options: { clock: time.clock, intervalMs },
    behind(ms: number) {
      time.set(last + intervalMs + ms);
    },
    lateTick(ms: number) {
      time.set(last + intervalMs + ms);
      time.tick();
      last = time.now();
    },
  };
}

/** Auctions always admitted while fewer are in flight (admission-in-flight-min), in the driven exchange. */
const FLOOR = 4;
let bidder: FakeBidder;
let shedding: TestExchange;
let plain: TestExchange;
let driven: TestExchange;
let lag: ReturnType<typeof drivenClock>;

beforeAll(async () => {
  bidder = await startFakeBidder((r) => ({ body: answer(r, [bid(1.5)]) }));
  const bidders = [{ id: "dsp", endpoint: bidder.endpoint, seat: "s" }];
  shedding = await startExchange(bidders, { loadShedding: true });
  plain = await startExchange(bidders);
  lag = drivenClock();
  // A rate of 0 (no window ever ends: the bucket stays empty) over FLOOR auctions in flight: the tests hold that many at the bidder.
  driven = await startExchange(bidders, { loadShedding: { ...lag.options, admission: { initialRate: 0, inFlightMin: FLOOR, windowMs: 1e12 } } });
});
afterAll(async () => {
  await shedding?.close();
  await plain?.close();
  await driven?.close();
  await bidder?.close();
});

describe("load shedding", () => {
  test("an auction read after a stall longer than its tmax is answered 204 at once, counted overloaded; its requests still count", async () => {
    const calls = bidder.requests.length;
    const before = shedding.handle.stats();
    // The request sits unread while the loop is busy: beyond its whole tmax.
    expect(await auctionDuringStall(shedding, bannerRequest({ tmax: 1000 }), 1500)).toEqual({ status: 204, noBid: "overloaded" });
    const after = shedding.handle.stats();
    expect(after.overloaded - before.overloaded).toBe(1);
    expect(after.noBid - before.noBid).toBe(1);
    expect(bidder.requests.length).toBe(calls);
    await shedding.handle.flushFacts();
    expect(shedding.sink.sum("request", { side: "supply" })).toBeGreaterThanOrEqual(1);
  });

  test("the same stall with a tmax that still leaves the bidders their time runs the auction", async () => {
    const before = shedding.handle.stats();
    expect(await auctionDuringStall(shedding, bannerRequest({ tmax: GENEROUS_TMAX }), 200)).toEqual({ status: 200, noBid: undefined });
    expect(shedding.handle.stats().overloaded).toBe(before.overloaded);
  });

  test("without load shedding, the stalled request runs (the exchange's clock starts when it reads the request)", async () => {
    expect(await auctionDuringStall(plain, bannerRequest({ tmax: 1000 }), 1500)).toEqual({ status: 200, noBid: undefined });
    expect(plain.handle.stats().overloaded).toBe(0);
  });
});

/** Sends `body` as an auction on a connection of its own (the test exchange's pool may be busy); resolves with status and x-adxkit-no-bid. */
async function rawAuction(exchange: TestExchange, body: string): Promise<{ status: number; noBid?: string }> {
  const { port } = new URL(exchange.url);
  const socket = connect(Number(port), "127.0.0.1");
  await once(socket, "connect");
  let text = "";
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => (text += chunk));
  const ended = once(socket, "end");
  socket.write(`POST /openrtb2/auction HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  await ended;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), noBid: /^x-adxkit-no-bid: (.*)\r$/im.exec(text)?.[1] };
}

/**
 * Runs `count` auctions on `exchange` whose bidder holds its answer, calls `during` while they
 * run, then lets the bidder answer; resolves with what `during` returned.
 */
async function whileRunning<T>(exchange: TestExchange, count: number, during: () => Promise<T>): Promise<T> {
  const held: (() => void)[] = [];
  const calls = bidder.requests.length;
  bidder.behave((r) => new Promise((resolve) => held.push(() => resolve({ body: answer(r, [bid(1.5)]) }))));
  // Each on a connection of its own: a pool's connections would cap how many reach the exchange.
  const running = Array.from({ length: count }, () => rawAuction(exchange, JSON.stringify(bannerRequest())));
  await eventually(async () => bidder.requests.length, (n) => n >= calls + count, undefined, `${count} auctions at the bidder`);
  try {
    return await during();
  } finally {
    bidder.behave((r) => ({ body: answer(r, [bid(1.5)]) }));
    for (const release of held) release();
    await Promise.all(running);
  }
}

describe("shedding before the body is read (admission-*: a rate with no room, and in-flight-min auctions in flight)", () => {
  test("a request finding the rate's bucket empty, with in-flight-min auctions in flight, is answered 204 overloaded unread: no bidder called, counted in no report", async () => {
    await driven.handle.flushFacts();
    const requestsBefore = driven.sink.sum("request", { side: "supply" });
    const before = driven.handle.stats();
    const limit = FLOOR;
    const [shed, calls, inFlight] = await whileRunning(driven, limit, async () => {
      const calls = bidder.requests.length;
      const inFlight = driven.handle.stats().admission!.inFlight;
      const shed = await rawAuction(driven, JSON.stringify(bannerRequest()));
      return [shed, bidder.requests.length - calls, inFlight];
    });
    expect(inFlight).toBe(limit);
    expect(shed).toEqual({ status: 204, noBid: "overloaded" });
    expect(calls).toBe(0);
    const after = driven.handle.stats();
    expect([after.overloaded - before.overloaded, after.auctions - before.auctions]).toEqual([1, limit + 1]);
    await driven.handle.flushFacts();
    // The auctions that ran count their requests; the shed one, unread, does not.
    expect(driven.sink.sum("request", { side: "supply" }) - requestsBefore).toBe(limit);
    // Every admitted auction gave its place back once answered.
    await eventually(async () => driven.handle.stats().admission!.inFlight, (n) => n === 0, undefined, "no auction in flight");
  });

  test("the body is not read: a malformed one is shed too, not answered 400", async () => {
    const before = driven.handle.stats();
    const shed = await whileRunning(driven, FLOOR, () => rawAuction(driven, "{not json"));
    expect(shed).toEqual({ status: 204, noBid: "overloaded" });
    expect(driven.handle.stats().invalidRequests).toBe(before.invalidRequests);
  });

  test("one under in-flight-min, however far behind the loop is and the bucket empty, the request is read and the auction runs", async () => {
    const before = driven.handle.stats();
    const ran = await whileRunning(driven, FLOOR - 1, async () => {
      const calls = bidder.requests.length;
      lag.behind(500); // a loop this far behind is no reason to shed by itself: the rate decides, judged a window at a time
      const answer = rawAuction(driven, JSON.stringify(bannerRequest({ tmax: GENEROUS_TMAX })));
      await eventually(async () => bidder.requests.length, (n) => n > calls, undefined, "the auction at the bidder");
      lag.lateTick(0);
      return { answer }; // not awaited here: the bidder answers once `during` is done
    });
    expect((await ran.answer).status).toBe(200);
    expect(driven.handle.stats().overloaded).toBe(before.overloaded);
  });

  test("a place given back is taken again: after the held auctions answer, the next request runs", async () => {
    const shed = await whileRunning(driven, FLOOR, () => rawAuction(driven, JSON.stringify(bannerRequest())));
    expect(shed).toEqual({ status: 204, noBid: "overloaded" });
    await eventually(async () => driven.handle.stats().admission!.inFlight, (n) => n === 0, undefined, "no auction in flight");
    expect((await rawAuction(driven, JSON.stringify(bannerRequest()))).status).toBe(200);
  });

  test("without load shedding there is no rate: stats() has no admission", () => {
    expect(plain.handle.stats().admission).toBeUndefined();
  });

  test("the loop's lag is taken out of the bidders' budget twice: the wait before the request was read, and the slip of their timers", async () => {
    // The last tick ran a second late; the loop is on time now. tmax 3000 leaves bidders 2700 ms
    // less 1000 waited and 1000 of timer slip: at most 700 (without the slip it would be 1700).
    lag.lateTick(1000);
    const calls = bidder.requests.length;
    expect((await driven.auction(bannerRequest({ tmax: 3000 }))).status).toBe(200);
    expect(bidder.requests.length).toBe(calls + 1);
    expect(bidder.requests.at(-1).tmax).toBeLessThanOrEqual(700);
    lag.lateTick(0);
  });

  test("whether an auction is too late to run counts the wait once: half its tmax waited, it runs (its bidders get shed-below-ms)", async () => {
    // tmax 3000 leaves 2700 before the margin; 1500 waited leaves 1200. Counted twice (the wait
    // and as much timer slip) it left nothing and was shed: after every long turn of a busy loop,
    // auctions with half their tmax left were shed (most sheds of the bench's overload row).
    lag.lateTick(1500);
    const calls = bidder.requests.length;
    const answer = await rawAuction(driven, JSON.stringify(bannerRequest({ tmax: 3000 })));
    lag.lateTick(0);
    expect(answer.noBid).not.toBe("overloaded");
    expect(bidder.requests.length).toBe(calls + 1);
    expect(bidder.requests.at(-1).tmax).toBe(auctionRules.shedBelowMs);
  });

  test("a wait that leaves less than shed-below-ms of the bidders' budget sheds the auction, counted too late", async () => {
    const before = driven.handle.stats();
    lag.lateTick(2700 - auctionRules.shedBelowMs + 5);
    const calls = bidder.requests.length;
    const answer = await rawAuction(driven, JSON.stringify(bannerRequest({ tmax: 3000 })));
    lag.lateTick(0);
    expect(answer).toEqual({ status: 204, noBid: "overloaded" });
    expect(bidder.requests.length).toBe(calls);
    const after = driven.handle.stats();
    expect([after.overloaded - before.overloaded, after.overloadedTooLate - before.overloadedTooLate]).toEqual([1, 1]);
  });

});

/**
 * A lag clock driven window by window: `run(ms, busyShare, lateMs)` moves time by the probe's 5 ms
 * ticks, each `lateMs` late, the loop busy that share of it (overload.ts judges a window from these).
 */
function windowClock() {
  const time = manualLagClock();
  return {
    options: { clock: time.clock, intervalMs: 5 },
    run(ms: number, busyShare: number, lateMs = 0) {
      for (let t = 0; t < ms; t += 5 + lateMs) {
        time.set(time.now() + 5 + lateMs);
        time.busy((5 + lateMs) * busyShare);
        time.tick();
      }
    },
  };
}

// The rate is judged on the loop's own queue: a busy window behind throughout, after another,
// cuts it, and the requests past it are shed unread; a busy loop that keeps up cuts nothing, nor
// do auctions waiting for their bidders (normal for DSPs across a network, or a slow bidder),
// however many are in flight.
describe("the admission rate, judged a window at a time", () => {
  const rules = { windowMs: 100, lagMs: 20, targetUtilisation: 0.8, decrease: 0.5, increase: 1.5, probeStep: 0.5, liftWindows: 1, burstMs: 100, inFlightMin: 0 };

  test("a standing queue in a busy loop cuts the rate: a request past it is shed unread; on-time windows raise it, then lift it", async () => {
    const clock = windowClock();
    const exchange = await startExchange([{ id: "dsp", endpoint: bidder.endpoint, seat: "s" }], { loadShedding: { ...clock.options, admission: rules } });
    try {
      expect((await rawAuction(exchange, JSON.stringify(bannerRequest()))).status).toBe(200);
      expect((await rawAuction(exchange, JSON.stringify(bannerRequest()))).status).toBe(200);
      clock.run(100, 1, 25); // a window busy throughout, its ticks 25 ms late: one may be a long turn
      expect(exchange.handle.stats().admission).toMatchObject({ rate: null, cuts: 0 });
      clock.run(100, 1, 25); // two: a standing queue; 2 auctions in 240 ms (ticks 30 ms apart), halved
      expect(exchange.handle.stats().admission).toMatchObject({ rate: 4, cuts: 1, lagMs: 25 });
      const calls = bidder.requests.length;
      expect(await rawAuction(exchange, JSON.stringify(bannerRequest()))).toEqual({ status: 204, noBid: "overloaded" });
      expect(bidder.requests.length).toBe(calls);
      clock.run(100, 0); // a window that shed, on time and idle: up by probe-step of the ceiling (8 a second)
      expect(exchange.handle.stats().admission).toMatchObject({ rate: 8, ceiling: 8, cuts: 1 });
      clock.run(100, 0); // one that shed nothing, idle (lift-windows 1 here): no rate
      expect(exchange.handle.stats().admission).toMatchObject({ rate: null, cuts: 1 });
      expect((await rawAuction(exchange, JSON.stringify(bannerRequest()))).status).toBe(200);
    } finally {
      await exchange.close();
    }
  });

  test("a loop busy throughout that keeps up, window after window, cuts nothing and sheds nothing (a closed loop of callers)", async () => {
    const clock = windowClock();
    const exchange = await startExchange([{ id: "dsp", endpoint: bidder.endpoint, seat: "s" }], { loadShedding: { ...clock.options, admission: rules } });
    try {
      for (let i = 0; i < 5; i++) {
        expect((await rawAuction(exchange, JSON.stringify(bannerRequest()))).status).toBe(200);
        clock.run(100, 1, 5); // busy throughout, its turns long, but caught up within 5 ms
      }
      expect(exchange.handle.stats().admission).toMatchObject({ rate: null, cuts: 0, utilisation: 1 });
      expect(exchange.handle.stats().overloaded).toBe(0);
    } finally {
      await exchange.close();
    }
  });

  test("auctions waiting for a slow bidder, window after window, cut nothing and shed nothing", async () => {
    const clock = windowClock();
    const exchange = await startExchange([{ id: "dsp", endpoint: bidder.endpoint, seat: "s" }], { loadShedding: { ...clock.options, admission: rules } });
    try {
      const more = await whileRunning(exchange, 8, async () => {
        clock.run(500, 0.05); // 8 auctions in flight for five windows, the loop nearly idle
        return rawAuction(exchange, JSON.stringify(bannerRequest()));
      });
      expect(more.noBid).toBeUndefined();
      expect(exchange.handle.stats().admission).toMatchObject({ rate: null, cuts: 0 });
      expect(exchange.handle.stats().overloaded).toBe(0);
    } finally {
      await exchange.close();
    }
  });
});
