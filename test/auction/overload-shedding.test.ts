// Load shedding, written as the overload: a request that reaches an exchange whose event loop is
// stuck is read late, and its wait counts as spent; when what is left cannot hold the bidders'
// minimum, the auction is answered 204 at once, its supply requests counted, no bidder called.
// The stall is a synchronous busy loop in the test (the exchange shares this process), so its
// length is a floor whatever the machine's speed: a slower machine only stalls longer.
import { once } from "node:events";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { answer, bannerRequest, bid, GENEROUS_TMAX, startExchange, startFakeBidder, type FakeBidder, type TestExchange } from "./helpers.js";

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

let bidder: FakeBidder;
let shedding: TestExchange;
let plain: TestExchange;

beforeAll(async () => {
  bidder = await startFakeBidder((r) => ({ body: answer(r, [bid(1.5)]) }));
  shedding = await startExchange([{ id: "dsp", endpoint: bidder.endpoint, seat: "s" }], { loadShedding: true });
  plain = await startExchange([{ id: "dsp", endpoint: bidder.endpoint, seat: "s" }]);
});
afterAll(async () => {
  await shedding?.close();
  await plain?.close();
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
