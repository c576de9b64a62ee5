/**
 * Log volume: a request line per auction and billing call only at debug (thousands a second
 * under load), every other request at info, and once a second in which auctions ran a summary
 * at info (service/app.ts, service/ops).
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, expect, test } from "vitest";
import { buildApp } from "../../service/app.js";
import { registerExchange } from "../../service/auction/index.js";
import { registerOps, ServerMetrics } from "../../service/ops/index.js";
import { openStore, type ReportStore } from "../../service/store/index.js";
import { answer, bannerRequest, bid, BILLING_KEYS, PUBLIC_URL, startFakeBidder, waitFor, type FakeBidder } from "../auction/helpers.js";

let store: ReportStore;
let bidder: FakeBidder;
beforeAll(async () => {
  store = await openStore({ db: ":memory:" });
  bidder = await startFakeBidder((r) => ({ body: answer(r, [bid(2)]) }));
});
afterAll(async () => {
  await bidder.close();
  await store.close();
});

/** An app logging at `level` into memory, with the exchange and the operations endpoints. */
async function appLoggingAt(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(text));
      done();
    },
  });
  const app = await buildApp({
    store,
    logger: { level, stream },
    extend: (instance) => {
      const exchange = registerExchange(instance, { bidders: [{ id: "dsp-1", endpoint: bidder.endpoint, seat: "s" }], sink: store, billingKeys: BILLING_KEYS, publicUrl: PUBLIC_URL, openAuction: true });
      registerOps(instance, { store, metrics: new ServerMetrics(), exchange, bidders: 1 });
    },
  });
  return { app, lines };
}

const auction = (app: Awaited<ReturnType<typeof buildApp>>) => app.inject({ method: "POST", url: "/openrtb2/auction", headers: { "content-type": "application/json" }, payload: bannerRequest() });

test("at info: no line per auction, a line per other request, and a summary of each second with auctions", async () => {
  const { app, lines } = await appLoggingAt("info");
  try {
    for (let i = 0; i < 3; i++) expect((await auction(app)).statusCode).toBe(200);
    await app.inject({ method: "GET", url: "/health" });
    await waitFor(() => lines.some((l) => l.msg === "auctions in the last second"), undefined, "the summary line");
    const incoming = lines.filter((l) => l.msg === "incoming request");
    expect(incoming.map((l) => (l.req as { url: string }).url)).toEqual(["/health"]);
    expect(lines.filter((l) => l.msg === "request completed")).toHaveLength(1);
    const summaries = lines.filter((l) => l.msg === "auctions in the last second");
    expect(summaries.reduce((n, l) => n + (l.auctions as number), 0)).toBe(3);
    expect(summaries[0]).toMatchObject({ level: 30, won: expect.any(Number), bids: expect.any(Number), bidderFaults: 0 });
  } finally {
    await app.close();
  }
});

test("at debug: a line per auction too", async () => {
  const { app, lines } = await appLoggingAt("debug");
  try {
    expect((await auction(app)).statusCode).toBe(200);
    const incoming = lines.filter((l) => l.msg === "incoming request");
    expect(incoming).toMatchObject([{ level: 20, req: { method: "POST", url: "/openrtb2/auction" } }]);
    expect(lines.filter((l) => l.reqId === incoming[0].reqId && l.msg === "request completed")).toMatchObject([{ level: 20, res: { statusCode: 200 } }]);
  } finally {
    await app.close();
  }
});
