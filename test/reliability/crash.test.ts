/**
 * Crashes lose nothing (docs/reliability.md, "Crashes"): `adxkit serve` runs as a real process
 * with its spool and DuckDB file; auctions and billing calls run against it concurrently and
 * it is killed with SIGKILL at a random moment, several times, restarting each time on the same
 * files. After every restart:
 *   - every billing call that got its 204 before the kill is counted (the reports are read
 *     before anything is sent again), and nothing is counted that was never issued;
 *   - then every billing URL ever issued is called again (as devices retry), and the reports
 *     settle at exactly one impression per token, with the revenue of their clearing prices,
 *     and stay there;
 *   - every auction answered before a kill has its request counted (auctions in flight at the
 *     kill may or may not be).
 * A second test kills `adxkit ingest` in the middle of a load: nothing of it is visible, and the
 * load run again counts once. Needs dist/ (npm test builds it first).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBidder, type RunningBidder } from "../../service/bidder/index.js";
import { openStore } from "../../service/store/index.js";
import { BUILT, CLI, ROOT, freePort, killServerProcess, startServerProcess, stopServerProcess, type ServerProcess } from "../helpers/server-process.js";

const CYCLES = 3;
// Fewer than admission-in-flight-min (16): a loaded server never sheds an auction unread, which would count in no report.
const WORKERS = 12;
const PUBLISHER = "pub-crash";
const BIDDER = "dsp-crash";
const DAY_MS = 86_400_000;

interface Credentials {
  userid: string;
  authorization: string;
}

/** `adxkit accounts create … ` (the server must not be running: DuckDB has one writer). */
function createAccount(db: string, args: string[]): Credentials {
  const result = spawnSync(process.execPath, [CLI, "accounts", "create", "--db", db, ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  if (result.status !== 0) throw new Error(`accounts create failed: ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split("\n").pop()!);
}

const utc = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/** Supply (B) or demand (A) totals over yesterday..tomorrow, through the report API. */
async function totals(url: string, side: "supply" | "demand", credentials: Credentials): Promise<{ request: number; impression: number; revenue: number }> {
  const path = side === "supply" ? "/api/report/v1" : "/api/report/demand_report_v2";
  const now = Date.now();
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-userid": credentials.userid, "x-authorization": credentials.authorization },
    body: JSON.stringify({ start: utc(now - DAY_MS), end: utc(now + DAY_MS), metrics: ["request", "impression", "revenue"] }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { status: { code: number; msg: string }; data: { data: { request: number; impression: number; revenue: number }[] } };
  expect(body.status.code, body.status.msg).toBe(0);
  return body.data.data[0] ?? { request: 0, impression: 0, revenue: 0 };
}

/** Polls `read` until `done` holds (then returns the value), failing after `ms`. */
async function settle<T>(read: () => Promise<T>, done: (value: T) => boolean, ms: number, what: string): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.skipIf(!BUILT)(`kill -9 of adxkit serve under load${BUILT ? "" : " — SKIPPED: dist/ is not built (npx tsc -p tsconfig.build.json)"}`, () => {
  const dir = mkdtempSync(join(tmpdir(), "adxkit-crash-"));
  const db = join(dir, "data", "adxkit.duckdb");
  const biddersFile = join(dir, "bidders.json");
  let bidder: RunningBidder;
  let supplyAccount: Credentials;
  let demandAccount: Credentials;
  let node: ServerProcess | undefined;

  beforeAll(async () => {
    bidder = await startBidder({ id: BIDDER, seat: "seat-crash", price: [1, 3], fill: 1, latency: [0, 3], seed: 7 });
    writeFileSync(biddersFile, JSON.stringify([{ id: BIDDER, endpoint: bidder.endpoint, seat: "seat-crash", allow_private_addresses: true }]));
    supplyAccount = createAccount(db, ["--side", "supply", "--publisher-id", PUBLISHER]);
    demandAccount = createAccount(db, ["--side", "demand", "--bidder-id", BIDDER]);
  });
  afterAll(async () => {
    if (node) await killServerProcess(node);
    await bidder?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts every acknowledged billing call after each restart, and every issued token exactly once", { timeout: 180_000 }, async () => {
    const port = await freePort();
    /** Billing token → clearing price in micro-units, for every bid the exchange answered with. */
    const issued = new Map<string, number>();
    const acknowledged = new Set<string>();
    let auctionsSent = 0;
    // Auctions run and answered (not shed: a shed is a 204 with x-adxkit-no-bid), and those that
    // won a bid, which the bidder was certainly sent. Under load a bidder may be skipped (its
    // breaker open, too little time left), so only won auctions bound the demand requests.
    let auctionsAnswered = 0;
    let auctionsWon = 0;
    let serial = 0;
    const issuedRevenue = () => [...issued.values()].reduce((sum, micros) => sum + micros, 0) / 1e9;

    const bill = async (url: string, token: string): Promise<number> => {
      const response = await fetch(`${url}/events/billing?token=${encodeURIComponent(token)}`, { signal: AbortSignal.timeout(10_000) });
      await response.body?.cancel();
      if (response.status === 204) acknowledged.add(token);
      return response.status;
    };

    for (let cycle = 1; cycle <= CYCLES + 1; cycle++) {
      node = await startServerProcess(`serve (run ${cycle})`, ["--db", db, "--bidders", biddersFile, "--open-auction"], port);
      const url = node.url;
      if (cycle > 1) {
        // Before anything is sent again: what was acknowledged is there, nothing that was never issued is.
        const recovered = await totals(url, "supply", supplyAccount);
        expect(recovered.impression).toBeGreaterThanOrEqual(acknowledged.size);
        expect(recovered.impression).toBeLessThanOrEqual(issued.size);
        // Devices call again: every token counts once, acknowledged or not.
        const tokens = [...issued.keys()];
        for (let i = 0; i < tokens.length; i += 16) {
          const statuses = await Promise.all(tokens.slice(i, i + 16).map((token) => bill(url, token)));
          expect(statuses.every((status) => status === 204)).toBe(true);
        }
        await settle(() => totals(url, "supply", supplyAccount), (t) => t.impression === issued.size, 30_000, "supply impressions after the billing calls were repeated");
      }
      if (cycle > CYCLES) break;

      // Load, and a kill -9 at a random moment while it runs: once this run has real work
      // acknowledged (a busy machine may take seconds for it, fdatasync included), 0-1 s later.
      const before = acknowledged.size;
      let killed = false;
      const kill = (async () => {
        for (const until = Date.now() + 30_000; acknowledged.size < before + 20 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 20));
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 1000)));
        killed = true;
        await killServerProcess(node!);
      })();
      await Promise.all(
        Array.from({ length: WORKERS }, async () => {
          while (!killed) {
            const id = `crash-${cycle}-${serial++}`;
            const request = { id, tmax: 500, imp: [{ id: "1", tagid: `placement-${serial % 3}`, bidfloor: 0.5, banner: { w: 320, h: 50 } }], app: { bundle: "com.example.crash", publisher: { id: PUBLISHER } }, device: { os: "Android", geo: { country: "USA" } } };
            try {
              auctionsSent++;
              const response = await fetch(`${url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request), signal: AbortSignal.timeout(5_000) });
              const answer = response.status === 200 ? ((await response.json()) as { seatbid: { bid: { price: number; burl: string }[] }[] }) : undefined;
              if (response.status !== 200) await response.body?.cancel();
              if (response.headers.get("x-adxkit-no-bid") === null) auctionsAnswered++;
              if ((answer?.seatbid.length ?? 0) > 0) auctionsWon++;
              for (const bid of answer?.seatbid.flatMap((seat) => seat.bid) ?? []) {
                const token = new URL(bid.burl).searchParams.get("token")!;
                issued.set(token, Math.round(bid.price * 1e6));
                await bill(url, token);
              }
            } catch {
              // The server is gone (killed): this auction or billing call may or may not have counted.
            }
          }
        }),
      );
      await kill;
      // Each run must have done real work before its kill, or the test proves nothing.
      expect(acknowledged.size).toBeGreaterThanOrEqual(before + 20);
    }

    // The last run: exactly once, and it stays so; demand agrees; revenue is the clearing prices'.
    const url = node!.url;
    const supply = await settle(() => totals(url, "supply", supplyAccount), (t) => t.impression === issued.size, 30_000, "supply impressions");
    const demand = await settle(() => totals(url, "demand", demandAccount), (t) => t.impression === issued.size, 30_000, "demand impressions");
    expect(Math.abs(supply.revenue - issuedRevenue())).toBeLessThan(1e-5);
    expect(Math.abs(demand.revenue - issuedRevenue())).toBeLessThan(1e-5);
    // One imp per auction: answered auctions all counted, in-flight ones at most.
    expect(supply.request).toBeGreaterThanOrEqual(auctionsAnswered);
    expect(supply.request).toBeLessThanOrEqual(auctionsSent);
    expect(demand.request).toBeGreaterThanOrEqual(auctionsWon);
    expect(auctionsWon).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // two more flushes: nothing is added twice
    expect((await totals(url, "supply", supplyAccount)).impression).toBe(issued.size);
    expect(await stopServerProcess(node!)).toBe(0);
    node = undefined;
  });

  it("a load killed half way is not visible at all; run again, it counts once", { timeout: 120_000 }, async () => {
    const ingestDb = join(dir, "ingest", "adxkit.duckdb");
    const file = join(dir, "facts.ndjson");
    const lines: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      const hour = `2026-10-${String(1 + (i % 28)).padStart(2, "0")}T${String(i % 24).padStart(2, "0")}:00:00`;
      lines.push(`{"side":"supply","date_hour":"${hour}","publisher_id":"${PUBLISHER}","app_bundle_id":"com.example.${i % 50}","placement_id":"p-${i % 7}","ad_format":1,"platform":2,"country":"USA","request":1,"response":1,"impression":1,"revenue":0.001}`);
    }
    writeFileSync(file, `${lines.join("\n")}\n`);
    const requests = async () => {
      const store = await openStore({ db: ingestDb });
      try {
        const result = await store.report({ side: "supply", start: "2026-10-01T00:00:00", end: "2026-10-31T23:59:59", metrics: ["request"], dimensions: [], filters: {}, limit: 10, scope: { publisher_ids: [PUBLISHER] } });
        return (result.rows[0]?.request as number | undefined) ?? 0;
      } finally {
        await store.close();
      }
    };
    // Fed through stdin and killed before the input ends: a load cannot commit before its end,
    // so this kill lands inside the transaction; the drained pipe says the lines were read.
    const child = spawn(process.execPath, [CLI, "ingest", "--db", ingestDb, "-"], { cwd: ROOT, stdio: ["pipe", "ignore", "pipe"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const half = `${lines.slice(0, lines.length / 2).join("\n")}\n`;
    if (!child.stdin!.write(half)) await new Promise((resolve) => child.stdin!.once("drain", resolve));
    child.kill("SIGKILL");
    expect(await exited).toBeNull();
    expect(await requests()).toBe(0);
    const rerun = spawnSync(process.execPath, [CLI, "ingest", "--db", ingestDb, file], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    expect(rerun.status, rerun.stderr).toBe(0);
    expect(await requests()).toBe(lines.length);
  });
});
