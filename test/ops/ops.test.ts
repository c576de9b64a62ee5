/**
 * The operations endpoints of `adxkit serve` (service/ops): /health, /ready with its checks and
 * their reasons, /metrics in the Prometheus text format with the exchange's counters per bidder
 * and the latency histograms, and `/` sending a browser to the docs. A server started the way
 * `adxkit serve` starts it (startServer), on 127.0.0.1 and a port the test picks.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PortUnavailableError, startServer, type RunningServer } from "../../service/server.js";
import { openStore } from "../../service/store/index.js";
import { answer, bannerRequest, bid, startFakeBidder, type FakeBidder } from "../auction/helpers.js";
import { sample } from "../helpers/metrics-text.js";

const dir = mkdtempSync(join(tmpdir(), "adxkit-ops-"));
let bidder: FakeBidder;
let server: RunningServer;

const get = (path: string) => fetch(`${server.url}${path}`, { redirect: "manual" });
const auction = (request: unknown) => fetch(`${server.url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });

beforeAll(async () => {
  bidder = await startFakeBidder((r) => ({ body: answer(r, [bid(2)]) }));
  const biddersFile = join(dir, "bidders.json");
  writeFileSync(biddersFile, JSON.stringify([{ id: "dsp-1", endpoint: bidder.endpoint, seat: "seat-1" }]));
  server = await startServer({ db: join(dir, "data", "adxkit.duckdb"), port: 0, biddersFile, logLevel: "silent", openAuction: true });
});
afterAll(async () => {
  await server?.close();
  await bidder?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("health and readiness", () => {
  test("/health answers while the process runs", async () => {
    const res = await get("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  test("/ready: the store answers, the spool takes a write, the bidders are loaded", async () => {
    const res = await get("/ready");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      ready: true,
      checks: {
        store: { ok: true, detail: "answers" },
        spool: { ok: true, detail: `${join(dir, "data", "spool")} is writable` },
        bidders: { ok: true, detail: "1 loaded" },
      },
    });
  });

  test("/ready is 503 naming each check that fails, with its reason", async () => {
    const store = await openStore({ db: ":memory:" });
    const spool = join(dir, "not-a-folder");
    writeFileSync(spool, "a file where the spool folder should be");
    const other = await startServer({ db: ":memory:", store, port: 0, logLevel: "silent" });
    try {
      const { readiness } = await import("../../service/ops/index.js");
      await store.close();
      const result = await readiness({ store, metrics: undefined as never, bidders: 0, spoolDir: spool });
      expect(result.ready).toBe(false);
      expect(result.checks.store).toMatchObject({ ok: false, detail: expect.stringMatching(/closed/) });
      expect(result.checks.spool).toMatchObject({ ok: false, detail: expect.stringContaining(`${spool} is not writable`) });
      expect(result.checks.bidders).toEqual({ ok: false, detail: "the bidders file lists no bidder" });
      const res = await fetch(`${other.url}/ready`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { checks: { store: { ok: boolean } } }).checks.store.ok).toBe(false);
    } finally {
      await other.close();
    }
  });
});

describe("metrics", () => {
  test("auctions, bids, wins and latencies per bidder, in the Prometheus text format", async () => {
    expect((await auction(bannerRequest())).status).toBe(200);
    bidder.behave(() => ({ status: 204 }));
    expect((await auction(bannerRequest())).status).toBe(204);
    expect((await auction({ id: "x", imp: [] })).status).toBe(400);
    bidder.behave(() => ({ status: 500, body: "down" }));
    expect((await auction(bannerRequest())).status).toBe(204);

    const res = await get("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'adxkit_auctions_total{outcome="won"}')).toBe(1);
    expect(sample(text, 'adxkit_auctions_total{outcome="no_bid"}')).toBe(2);
    expect(sample(text, 'adxkit_auctions_total{outcome="invalid"}')).toBe(1);
    expect(sample(text, 'adxkit_bidder_requests_total{bidder="dsp-1"}')).toBe(3);
    expect(sample(text, 'adxkit_bidder_bids_total{bidder="dsp-1"}')).toBe(1);
    expect(sample(text, 'adxkit_bidder_no_bids_total{bidder="dsp-1"}')).toBe(1);
    expect(sample(text, 'adxkit_bidder_wins_total{bidder="dsp-1"}')).toBe(1);
    expect(sample(text, 'adxkit_bidder_faults_total{bidder="dsp-1",reason="http-error"}')).toBe(1);
    expect(sample(text, 'adxkit_bidder_circuit_state{bidder="dsp-1"}')).toBe(0);
    expect(sample(text, 'adxkit_auction_duration_seconds_count{outcome="won"}')).toBe(1);
    expect(sample(text, 'adxkit_auction_duration_seconds_count{outcome="no_bid"}')).toBe(2);
    expect(sample(text, 'adxkit_bidder_response_seconds_count{bidder="dsp-1",outcome="answer"}')).toBe(1);
    expect(sample(text, 'adxkit_bidder_response_seconds_count{bidder="dsp-1",outcome="fault"}')).toBe(1);
    for (const series of ['adxkit_notices_total{kind="win",result="sent"}', "adxkit_spool_backlog_lines", "adxkit_store_flush_lag_seconds", 'adxkit_billing_events_total{result="recorded"}', "process_cpu_user_seconds_total"]) {
      expect(sample(text, series), series).toBeGreaterThanOrEqual(0);
    }
    expect(text).toContain("# TYPE adxkit_bidder_rejections_total counter");
    // adxkit serve sheds load: an admission rate (+Inf while its loop keeps up), the loop's busy share, nothing in flight now.
    expect(text).toMatch(/^adxkit_auction_admission_rate (\+Inf|\d+(\.\d+)?)$/m);
    expect(sample(text, "adxkit_event_loop_utilisation")).toBeLessThanOrEqual(1);
    expect(sample(text, "adxkit_auctions_in_flight")).toBe(0);
    expect(text).toContain("# TYPE adxkit_auctions_overloaded_total counter");
    // Nothing shed on this idle server, by either reason.
    expect(sample(text, 'adxkit_auctions_overloaded_total{reason="admission_limit"}')).toBe(0);
    expect(sample(text, 'adxkit_auctions_overloaded_total{reason="too_late"}')).toBe(0);
  });

  test("lenient mode's changes are counted per rule for requests and per bidder for answers (adxkit serve --lenient)", async () => {
    const repaired = await startFakeBidder((r) => ({ body: answer(r, [bid(2)], { id: "another-id" }) }));
    const biddersFile = join(dir, "bidders-lenient.json");
    writeFileSync(biddersFile, JSON.stringify([{ id: "dsp-2", endpoint: repaired.endpoint, seat: "seat-2" }]));
    const lenient = await startServer({ db: ":memory:", port: 0, biddersFile, logLevel: "silent", openAuction: true, lenient: true });
    try {
      const res = await fetch(`${lenient.url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(bannerRequest({ test: 3 })) });
      expect(res.status).toBe(200);
      const text = await (await fetch(`${lenient.url}/metrics`)).text();
      expect(sample(text, 'adxkit_request_lenient_changes_total{action="drop",rule="enum"}')).toBe(1);
      expect(sample(text, 'adxkit_bidder_lenient_changes_total{bidder="dsp-2",action="normalise",rule="response-id-matches"}')).toBe(1);
      expect(sample(text, 'adxkit_bidder_wins_total{bidder="dsp-2"}')).toBe(1);
    } finally {
      await lenient.close();
      await repaired.close();
    }
  });

  test("report queries are timed by interface", async () => {
    await fetch(`${server.url}/api/report/v1`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    await fetch(`${server.url}/api/report/demand_report_v2?start=x`);
    const text = await (await get("/metrics")).text();
    expect(sample(text, 'adxkit_report_query_duration_seconds_count{interface="supply"}')).toBe(1);
    expect(sample(text, 'adxkit_report_query_duration_seconds_count{interface="demand"}')).toBe(1);
  });
});

test("/ sends a browser to the docs", async () => {
  const res = await get("/");
  expect(res.status).toBe(302);
  expect(res.headers.get("location")).toBe("/docs/");
});

test("a port in use fails at once with one line, before the store is opened", async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  const port = (taken.address() as { port: number }).port;
  const db = join(dir, "never", "adxkit.duckdb");
  try {
    const error = await startServer({ db, port, logLevel: "silent" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PortUnavailableError);
    expect((error as Error).message).toBe(`port ${port} on 127.0.0.1 is in use by another process: choose another with --port (or PORT / ADXKIT_PORT), or 0 for any free port`);
    const { existsSync } = await import("node:fs");
    expect(existsSync(join(dir, "never"))).toBe(false);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});
