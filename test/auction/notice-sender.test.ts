/** service/auction/notices.ts NoticeSender: retries with backoff, give-ups, drops and close, on a scripted HTTP client. */
import { describe, expect, test } from "vitest";
import { CallAborted, type HttpClient } from "../../service/auction/http-client.js";
import { NoticeSender } from "../../service/auction/notices.js";

/**
 * A scripted HttpClient.getStatus: each call takes the next outcome (a status, an error, or
 * "hang"). `batches` lists the URLs of each sendNotices group.
 */
function scriptedHttp(outcomes: (number | Error | "hang" | "sync-error")[]) {
  const calls: { url: string; at: number; aborted?: string }[] = [];
  const batches: string[][] = [];
  const http = {
    sendNotices(send: () => void) {
      const first = calls.length;
      send();
      batches.push(calls.slice(first).map((c) => c.url));
    },
    getStatus(url: URL, _timeoutMs: number, onDone: (status: number, error?: unknown) => void) {
      const call: { url: string; at: number; aborted?: string } = { url: url.href, at: Date.now() };
      calls.push(call);
      const outcome = outcomes.shift() ?? 204;
      if (outcome === "sync-error") onDone(0, Object.assign(new Error("bad request"), { code: "UND_ERR_INVALID_ARG" }));
      else if (outcome instanceof Error) setImmediate(() => onDone(0, outcome));
      else if (outcome !== "hang") setImmediate(() => onDone(outcome));
      return {
        abort(reason: string) {
          call.aborted = reason;
          onDone(0, new CallAborted(reason));
        },
      };
    },
  };
  return { http: http as unknown as HttpClient, calls, batches };
}

function logger() {
  const warnings: { obj: Record<string, unknown>; msg?: string }[] = [];
  return { warnings, info() {}, error() {}, warn: (obj: object, msg?: string) => void warnings.push({ obj: obj as Record<string, unknown>, msg }) };
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 5000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  expect(condition()).toBe(true);
};

const HOUR_MS = 3_600_000;

describe("notice sender", () => {
  test("a 2xx delivers; 5xx, 429 and network errors are retried with doubling delays, other statuses are not", async () => {
    const { http, calls } = scriptedHttp([503, 429, 200, 404, Object.assign(new Error("reset"), { code: "ECONNRESET" }), 204]);
    const log = logger();
    const sender = new NoticeSender(http, log, { attempts: 3, baseDelayMs: 20 });
    sender.send("win", "http://dsp.example/win?a=1", { auction: "a1" });
    await until(() => sender.pending === 0);
    expect(calls.map((c) => c.url)).toEqual(Array(3).fill("http://dsp.example/win?a=1"));
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(18);
    expect(calls[2].at - calls[1].at).toBeGreaterThanOrEqual(38);
    sender.send("billing", "http://dsp.example/bill", { auction: "a2" }); // 404: given up at once
    sender.send("billing", "http://dsp.example/bill?2", { auction: "a3" }); // reset, then 204
    await until(() => sender.pending === 0);
    expect(sender.stats()).toEqual({
      win: { sent: 1, delivered: 1, retried: 2, failed: 0, dropped: 0, refused: 0 },
      billing: { sent: 2, delivered: 1, retried: 1, failed: 1, dropped: 0, refused: 0 },
      pending: 0,
    });
    expect(log.warnings).toEqual([{ obj: { auction: "a2", kind: "billing", url: "http://dsp.example/bill", error: "HTTP 404" }, msg: "notice failed" }]);
  });

  test("a call that fails at once (before the request leaves) is retried like any other, and then given up", async () => {
    const { http, calls } = scriptedHttp(["sync-error", "sync-error"]);
    const log = logger();
    const sender = new NoticeSender(http, log, { attempts: 2, baseDelayMs: 1 });
    sender.send("win", "http://dsp.example/win", {});
    await until(() => sender.pending === 0);
    expect(calls).toHaveLength(2);
    expect(sender.stats().win).toMatchObject({ retried: 1, failed: 1 });
    expect(log.warnings[0].obj.error).toBe("UND_ERR_INVALID_ARG: bad request");
  });

  test("a URL that is not absolute http(s) is not called; past maxPending notices are dropped and counted", async () => {
    const { http, calls } = scriptedHttp(["hang", "hang"]);
    const sender = new NoticeSender(http, logger(), { maxPending: 2, batchMs: 0 });
    sender.send("win", "ftp://dsp.example/win", {});
    sender.send("win", "/relative", {});
    for (let i = 0; i < 5; i++) sender.send("win", `http://dsp.example/win?${i}`, {});
    expect(calls).toHaveLength(2);
    expect(sender.stats().win).toEqual({ sent: 7, delivered: 0, retried: 0, failed: 2, dropped: 3, refused: 0 });
    await sender.close(10);
  });

  test("close waits for notices in flight, then abandons the rest: calls aborted, retries not made", async () => {
    const { http, calls } = scriptedHttp([503, "hang", 204]);
    // The retry is an hour away: a close that waited for it would not return within the test.
    const sender = new NoticeSender(http, logger(), { attempts: 3, baseDelayMs: HOUR_MS });
    sender.send("win", "http://dsp.example/retrying", {});
    sender.send("win", "http://dsp.example/hanging", {});
    sender.send("billing", "http://dsp.example/quick", {});
    await until(() => sender.stats().win.retried === 1 && sender.stats().billing.delivered === 1);
    const started = Date.now();
    await sender.close(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(calls.find((c) => c.url.endsWith("/hanging"))?.aborted).toBe("the exchange is closing");
    expect(calls.filter((c) => c.url.endsWith("/retrying"))).toHaveLength(1);
    expect(sender.stats()).toMatchObject({ win: { sent: 2, delivered: 0, failed: 2 }, pending: 0 });
    sender.send("win", "http://dsp.example/after-close", {});
    expect(calls).toHaveLength(3);
    expect(sender.stats().win.failed).toBe(3);
  });

  test("notices of one batchMs window leave together in one sendNotices group, each on its own call", async () => {
    const { http, calls, batches } = scriptedHttp([]);
    const sender = new NoticeSender(http, logger(), { batchMs: 30 });
    const started = Date.now();
    for (let i = 0; i < 3; i++) sender.send("win", `http://dsp.example/win?${i}`, {});
    expect(calls).toHaveLength(0);
    expect(sender.pending).toBe(3); // waiting notices count as pending (close and the bench wait for them)
    await until(() => calls.length === 3);
    expect(calls[0].at - started).toBeGreaterThanOrEqual(25);
    sender.send("billing", "http://dsp.example/bill", {});
    await until(() => sender.pending === 0);
    expect(batches).toEqual([["http://dsp.example/win?0", "http://dsp.example/win?1", "http://dsp.example/win?2"], ["http://dsp.example/bill"]]);
    expect(sender.stats().win.delivered + sender.stats().billing.delivered).toBe(4);
  });

  test("sendNow sends a handed-over group at once, with the notices still waiting for their batch, in one sendNotices group", async () => {
    const { http, calls, batches } = scriptedHttp([]);
    const log = logger();
    const sender = new NoticeSender(http, log, { batchMs: 60_000 });
    sender.send("win", "http://dsp.example/win?waiting", {});
    const changes: number[] = [];
    sender.onChange = () => changes.push(sender.pending);
    sender.sendNow([
      ["win", "http://dsp.example/win?0", { auction: "a0" }],
      ["billing", "ftp://dsp.example/bill", { auction: "a1" }],
      ["billing", "http://dsp.example/bill?1", { auction: "a2" }],
    ]);
    // No wait for the 60 s window: the group and the waiting notice left in this call.
    expect(batches).toEqual([["http://dsp.example/win?waiting", "http://dsp.example/win?0", "http://dsp.example/bill?1"]]);
    expect(changes).toEqual([3]);
    await until(() => sender.pending === 0);
    expect(calls).toHaveLength(3);
    expect(sender.stats()).toMatchObject({ win: { sent: 2, delivered: 2 }, billing: { sent: 2, delivered: 1, failed: 1 } });
    expect(log.warnings.map((w) => w.obj.auction)).toEqual(["a1"]);
  });

  test("close sends the notices still waiting for their batch at once, and waits for them", async () => {
    const { http, calls } = scriptedHttp([]);
    // The batch window and the grace are an hour: a close that waited for either would not return within the test.
    const sender = new NoticeSender(http, logger(), { batchMs: HOUR_MS });
    sender.send("win", "http://dsp.example/win", {});
    await sender.close(HOUR_MS);
    expect(calls.map((c) => c.url)).toEqual(["http://dsp.example/win"]);
    expect(sender.stats().win).toMatchObject({ sent: 1, delivered: 1 });
  });

  test("close returns as soon as the last notice is done", async () => {
    const { http } = scriptedHttp([204]);
    const sender = new NoticeSender(http, logger());
    sender.send("win", "http://dsp.example/win", {});
    await sender.close(HOUR_MS); // returns at the notice's answer, not at the grace's end
    expect(sender.stats().win.delivered).toBe(1);
  });
});
