/**
 * The notice thread (service/auction/notice-thread.ts) against a real notice endpoint on
 * loopback: counters read from the shared array, the worker's warnings on the exchange's
 * logger, close waiting for notices in flight, and the fallback when the worker dies.
 * (Retries, give-ups and macros are covered through the exchange in notices.test.ts, which
 * runs with and without the thread.)
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { HttpClient } from "../../service/auction/http-client.js";
import { NoticeThread } from "../../service/auction/notice-thread.js";
import { NoticeSender } from "../../service/auction/notices.js";
import { gate, startFakeBidder, waitFor, type FakeBidder } from "./helpers.js";

let bidder: FakeBidder;
beforeAll(async () => {
  bidder = await startFakeBidder();
});
afterAll(async () => {
  await bidder.close();
});
beforeEach(() => {
  bidder.winAnswer = { status: 200 };
});

function recordingLogger() {
  const records: { level: string; obj: any; msg?: string }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => void records.push({ level, obj, msg });
  return { records, logger: { info: at("info"), warn: at("warn"), error: at("error") } };
}

function startThread(logger = recordingLogger().logger, batchMs?: number) {
  const http = new HttpClient();
  const fallback = new NoticeSender(http, logger, { attempts: 2, baseDelayMs: 10, timeoutMs: 20_000 });
  const thread = new NoticeThread(fallback, logger, { attempts: 2, baseDelayMs: 10, timeoutMs: 20_000, batchMs });
  return {
    thread,
    async close(graceMs = 1000) {
      await thread.close(graceMs);
      await http.close(0);
    },
  };
}

const context = (n: number) => ({ auction: `auction-${n}`, bidder: "dsp-a", imp: "1" });

describe("notice thread", () => {
  test("delivers every notice and its counters settle: sent = delivered, nothing pending", async () => {
    const { thread, close } = startThread();
    try {
      const before = bidder.wins.length;
      for (let n = 0; n < 200; n++) thread.send("win", `${bidder.url}/win?n=${n}`, context(n));
      thread.send("billing", `${bidder.url}/bill?n=x`, context(0));
      // Queued this turn, not yet handed over: already pending.
      expect(thread.stats().pending).toBe(201);
      await waitFor(() => thread.stats().pending === 0, undefined, "notices done");
      const stats = thread.stats();
      expect(stats.win).toEqual({ sent: 200, delivered: 200, retried: 0, failed: 0, dropped: 0, refused: 0 });
      expect(stats.billing).toMatchObject({ sent: 1, delivered: 1 });
      expect(bidder.wins.length - before).toBe(200);
      expect(new Set(bidder.wins.slice(before).map((w) => w.n)).size).toBe(200);
    } finally {
      await close();
    }
  });

  test("the notices of one batch window reach the worker in one message", async () => {
    const { thread, close } = startThread(undefined, 500);
    const worker = (thread as unknown as { worker: { postMessage(message: { type: string; items?: string[] }): void } }).worker;
    const messages: { type: string; items?: string[] }[] = [];
    const post = worker.postMessage.bind(worker);
    worker.postMessage = (message) => {
      messages.push(message);
      post(message);
    };
    try {
      const before = bidder.wins.length;
      for (let n = 0; n < 5; n++) thread.send("win", `${bidder.url}/win?n=w${n}`, context(n));
      await new Promise((resolve) => setImmediate(resolve));
      thread.send("billing", `${bidder.url}/bill?n=b`, context(5));
      expect(messages).toEqual([]); // held for the window
      await waitFor(() => thread.stats().pending === 0, undefined, "notices done");
      expect(messages.filter((m) => m.type === "send").map((m) => m.items!.length / 5)).toEqual([6]);
      expect(bidder.wins.length - before).toBe(5);
    } finally {
      await close();
    }
  });

  test("the worker's warnings reach the exchange's logger, with the notice's context", async () => {
    const { records, logger } = recordingLogger();
    const { thread, close } = startThread(logger);
    try {
      bidder.winAnswer = { status: 500 };
      thread.send("win", `${bidder.url}/win?n=failing`, context(7));
      await waitFor(() => thread.stats().win.failed === 1, undefined, "failed notice");
      await waitFor(() => records.length > 0, undefined, "log record");
      expect(records[0]).toMatchObject({ level: "warn", msg: "notice failed", obj: { auction: "auction-7", bidder: "dsp-a", kind: "win", error: "HTTP 500" } });
      expect(thread.stats().win.retried).toBe(1);
    } finally {
      await close();
    }
  });

  test("close waits for a notice in flight", async () => {
    const { thread, close } = startThread();
    // Let the worker start first: the slow answer must be in flight when close begins.
    thread.send("win", `${bidder.url}/win?n=warm`, context(0));
    await waitFor(() => thread.stats().win.delivered === 1, undefined, "first notice");
    bidder.winAnswer = { status: 200, delayMs: 300 };
    thread.send("win", `${bidder.url}/win?n=slow`, context(1));
    await close(20_000); // returns when the notice is done, long before this grace
    expect(thread.stats().win.delivered).toBe(2);
    expect(thread.stats().pending).toBe(0);
  });

  test("when the worker dies, later notices go through the exchange's thread and the lost ones are counted", async () => {
    const { records, logger } = recordingLogger();
    const { thread, close } = startThread(logger);
    try {
      thread.send("win", `${bidder.url}/win?n=before`, context(0));
      await waitFor(() => thread.stats().win.delivered === 1, undefined, "first notice");
      // Its answer is held until the worker is gone: the notice is in flight when it dies.
      const held = gate();
      bidder.winAnswer = { status: 200, hold: held.promise };
      thread.send("win", `${bidder.url}/win?n=lost`, context(1));
      try {
        await waitFor(() => bidder.wins.some((w) => w.n === "lost"), undefined, "notice in flight");
        await (thread as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      } finally {
        held.open();
      }
      await waitFor(() => records.some((r) => r.level === "error"), undefined, "exit logged");
      expect(thread.stats().lost).toBe(1);
      bidder.winAnswer = { status: 200 };
      thread.send("win", `${bidder.url}/win?n=after`, context(2));
      await waitFor(() => bidder.wins.some((w) => w.n === "after"), undefined, "notice after the worker died");
      await waitFor(() => thread.stats().pending === 0, undefined, "nothing pending");
      expect(thread.stats().win).toMatchObject({ sent: 3, delivered: 2 });
    } finally {
      await close();
    }
  });
});
