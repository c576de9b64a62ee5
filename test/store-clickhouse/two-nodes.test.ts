// Two exchange nodes (separate `adxkit serve --store clickhouse` processes) writing to one
// ClickHouse database: auctions alternate between the nodes, every billing call goes to the node
// that did NOT run the auction (same ADXKIT_BILLING_SECRET), both nodes stop on SIGTERM (which
// flushes their facts), and the reports read through the store count every auction once.
// Needs dist/ (npm test builds it first) and a ClickHouse server (skipped when none answers).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBidder, type RunningBidder } from "../../service/bidder/index.js";
import { openStore, type ReportQuery, type ReportStore } from "../../service/store/index.js";
import { BUILT, freePort, startServerProcess, stopServerProcess, type ServerProcess } from "../helpers/server-process.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason } from "./server.js";

const reason = await skipReason();
const AUCTIONS = 200;
const CONCURRENCY = 8;
const PUBLISHERS = ["pub-1", "pub-2"];
const BIDDER_IDS = ["dsp-a", "dsp-b"];

function bidRequest(n: number): unknown {
  const publisher = PUBLISHERS[n % PUBLISHERS.length];
  return {
    id: `two-nodes-${n}`,
    tmax: 1000,
    imp: [{ id: "1", tagid: `placement-${n % 3}`, bidfloor: 0.1, banner: { w: 320, h: 50 } }],
    app: { id: `app-${publisher}`, bundle: `com.example.${publisher}`, publisher: { id: publisher } },
    device: { os: n % 2 ? "Android" : "iOS", geo: { country: n % 5 ? "USA" : "GBR" }, ip: "192.0.2.1" },
  };
}

/** Runs `task` over 0..count-1, `limit` at a time. */
async function pool(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < count) await task(next++);
  }));
}

describe.skipIf(reason !== undefined || !BUILT)(
  `two exchange nodes on one ClickHouse database (${CLICKHOUSE_URL})${reason ? ` — SKIPPED: ${reason}` : !BUILT ? " — SKIPPED: dist/ is not built (npx tsc -p tsconfig.build.json)" : ""}`,
  () => {
    const database = `adxkit_test_${randomBytes(6).toString("hex")}`;
    const clickhouseUrl = `${CLICKHOUSE_URL}/${database}`;
    const dir = mkdtempSync(join(tmpdir(), "adxkit-two-nodes-"));
    const bidders: RunningBidder[] = [];
    const nodes: ServerProcess[] = [];
    let store: ReportStore | undefined;

    beforeAll(async () => {
      bidders.push(await startBidder({ id: BIDDER_IDS[0], seat: "seat-a", fill: 1, seed: 11 }), await startBidder({ id: BIDDER_IDS[1], seat: "seat-b", fill: 1, seed: 22 }));
      const biddersFile = join(dir, "bidders.json");
      writeFileSync(biddersFile, JSON.stringify(bidders.map((b, i) => ({ id: BIDDER_IDS[i], endpoint: b.endpoint, seat: `seat-${"ab"[i]}`, timeout_ms: 800, allow_private_addresses: true }))));
      const env = { ...process.env, ADXKIT_BILLING_SECRET: `two-nodes-${randomBytes(16).toString("hex")}` };
      const common = ["--store", "clickhouse", "--clickhouse-url", clickhouseUrl, "--bidders", biddersFile, "--open-auction"];
      // One after the other: the first creates the database and runs the migrations.
      // Each node has a spool of its own (one writer per spool folder).
      nodes.push(await startServerProcess("node 1", [...common, "--db", join(dir, "n1.duckdb"), "--spool", join(dir, "n1-spool")], await freePort(), env));
      nodes.push(await startServerProcess("node 2", [...common, "--db", join(dir, "n2.duckdb"), "--spool", join(dir, "n2-spool")], await freePort(), env));
    });

    afterAll(async () => {
      for (const node of nodes) await stopServerProcess(node).catch(() => node.child.kill("SIGKILL"));
      await Promise.allSettled(bidders.map((b) => b.close()));
      await store?.close().catch(() => undefined);
      await disposeTestStore(await openTestStore({ database }).catch(() => undefined)).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    });

    it("counts every auction and billing call once, whichever node ran or billed it", { timeout: 120_000 }, async () => {
      const firstDay = new Date().toISOString().slice(0, 10);
      let impsOffered = 0;
      // Imps of auctions that ran: a shed (a 204 with x-adxkit-no-bid, a busy machine) may count
      // no request if it was shed before its body was read.
      let impsRun = 0;
      let won = 0;
      let billed = 0;
      let clearingSum = 0;
      let crossBilled = 0;
      const statuses: Record<number, number> = {};
      await pool(AUCTIONS, CONCURRENCY, async (n) => {
        const runner = nodes[n % 2];
        const other = nodes[(n + 1) % 2];
        const request = bidRequest(n) as { imp: unknown[] };
        const response = await fetch(`${runner.url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request), signal: AbortSignal.timeout(10_000) });
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        impsOffered += request.imp.length;
        if (response.headers.get("x-adxkit-no-bid") === null) impsRun += request.imp.length;
        if (response.status !== 200) {
          await response.body?.cancel();
          return;
        }
        const body = (await response.json()) as { seatbid?: { bid: { price: number; burl: string }[] }[] };
        for (const seat of body.seatbid ?? []) {
          for (const bid of seat.bid) {
            won++;
            const burl = new URL(bid.burl);
            expect(burl.origin).toBe(runner.url);
            const billing = await fetch(`${other.url}${burl.pathname}${burl.search}`, { signal: AbortSignal.timeout(10_000) });
            await billing.body?.cancel();
            crossBilled++;
            if (billing.status >= 200 && billing.status < 300) {
              billed++;
              clearingSum += bid.price;
            }
          }
        }
      });
      // Every auction is answered; nearly all find a bid (fill 1, floors below the bid range; a bidder
      // slowed by a busy machine may miss its timeout), and every billing call sent to the other
      // node is accepted (same secret).
      expect(Object.keys(statuses).every((status) => status === "200" || status === "204")).toBe(true);
      expect(statuses[200]).toBeGreaterThanOrEqual(AUCTIONS * 0.9);
      expect(crossBilled).toBe(won);
      expect(billed).toBe(crossBilled);

      // SIGTERM: each node closes its exchange, which flushes the pending facts, then exits 0.
      const codes = [];
      for (const node of nodes) codes.push(await stopServerProcess(node));
      expect(codes).toEqual([0, 0]);

      store = await openStore({ store: "clickhouse", clickhouseUrl });
      const lastDay = new Date().toISOString().slice(0, 10);
      const metrics: ReportQuery["metrics"] = ["request", "response", "impression", "revenue"];
      const window: Omit<ReportQuery, "side" | "scope" | "metrics"> = { start: `${firstDay}T00:00:00`, end: `${lastDay}T23:59:59`, filters: {}, limit: 1000, dimensions: [] };
      const supply = await store.report({ ...window, side: "supply", metrics, scope: { publisher_ids: PUBLISHERS } });
      expect(supply.rows).toHaveLength(1);
      const s = supply.rows[0] as Record<string, number>;
      expect(s.request).toBeGreaterThanOrEqual(impsRun);
      expect(s.request).toBeLessThanOrEqual(impsOffered);
      expect(s.response).toBe(won);
      expect(s.impression).toBe(billed);
      expect(Math.abs(s.revenue - clearingSum / 1000)).toBeLessThan(1e-6);

      let demandRequests = 0;
      let demandImpressions = 0;
      let demandRevenue = 0;
      for (const [i, bidder_id] of BIDDER_IDS.entries()) {
        const demand = await store.report({ ...window, side: "demand", metrics, scope: { bidder_id } });
        const d = (demand.rows[0] ?? { request: 0, impression: 0, revenue: 0 }) as Record<string, number>;
        // One imp per bid request: the imps a bidder was sent are the bid requests it received.
        expect(d.request).toBe(bidders[i].stats().requests);
        demandRequests += d.request;
        demandImpressions += d.impression;
        demandRevenue += d.revenue;
      }
      // Each bidder is sent every imp that ran, unless a busy machine left it too little time or
      // opened its breaker; every won imp was sent to at least its winner.
      expect(demandRequests).toBeLessThanOrEqual(impsOffered * BIDDER_IDS.length);
      expect(demandRequests).toBeGreaterThanOrEqual(won);
      expect(demandImpressions).toBe(billed);
      expect(Math.abs(demandRevenue - clearingSum / 1000)).toBeLessThan(1e-6);
    });
  },
);
