// A billing call counts once across exchange nodes (issue 21): two `adxkit serve --store
// clickhouse` processes on one database, the same billing URLs sent to both — at once, one after
// the other, and again once the first calls are in the reports — and the supply and demand
// reports count each impression once, with its clearing price once.
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
const AUCTIONS = 24;
const PUBLISHER = "pub-once";
const BIDDER = "dsp-once";

describe.skipIf(reason !== undefined || !BUILT)(
  `a billing call counts once across two nodes on ClickHouse (${CLICKHOUSE_URL})${reason ? ` — SKIPPED: ${reason}` : !BUILT ? " — SKIPPED: dist/ is not built (npx tsc -p tsconfig.build.json)" : ""}`,
  () => {
    const database = `adxkit_test_${randomBytes(6).toString("hex")}`;
    const clickhouseUrl = `${CLICKHOUSE_URL}/${database}`;
    const dir = mkdtempSync(join(tmpdir(), "adxkit-billing-once-"));
    const nodes: ServerProcess[] = [];
    let bidder: RunningBidder | undefined;
    let store: ReportStore | undefined;

    beforeAll(async () => {
      bidder = await startBidder({ id: BIDDER, seat: "seat-1", fill: 1, seed: 5 });
      const biddersFile = join(dir, "bidders.json");
      writeFileSync(biddersFile, JSON.stringify([{ id: BIDDER, endpoint: bidder.endpoint, seat: "seat-1", timeout_ms: 2000, allow_private_addresses: true }]));
      const env = { ...process.env, ADXKIT_BILLING_SECRET: `billing-once-${randomBytes(16).toString("hex")}` };
      const common = ["--store", "clickhouse", "--clickhouse-url", clickhouseUrl, "--bidders", biddersFile, "--open-auction"];
      // One after the other: the first creates the database and runs the migrations.
      for (const n of [1, 2]) nodes.push(await startServerProcess(`node ${n}`, [...common, "--db", join(dir, `n${n}.duckdb`), "--spool", join(dir, `n${n}-spool`)], await freePort(), env));
    });

    afterAll(async () => {
      for (const node of nodes) await stopServerProcess(node).catch(() => node.child.kill("SIGKILL"));
      await bidder?.close();
      await store?.close().catch(() => undefined);
      await disposeTestStore(await openTestStore({ database }).catch(() => undefined)).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    });

    /** Calls a billing URL on `node` (its path and token; the host is the node's); the status. */
    async function bill(node: ServerProcess, burl: string): Promise<number> {
      const url = new URL(burl);
      const response = await fetch(`${node.url}${url.pathname}${url.search}`, { signal: AbortSignal.timeout(20_000) });
      await response.body?.cancel();
      return response.status;
    }

    it("counts the same token once whichever node gets it, at once or one after the other", { timeout: 180_000 }, async () => {
      const firstDay = new Date().toISOString().slice(0, 10);
      const won: { burl: string; price: number }[] = [];
      for (let n = 0; n < AUCTIONS; n++) {
        const request = {
          id: `once-${n}`,
          tmax: 2000,
          imp: [{ id: "1", tagid: `placement-${n % 2}`, bidfloor: 0.1, banner: { w: 320, h: 50 } }],
          app: { id: "app-1", bundle: "com.example.once", publisher: { id: PUBLISHER } },
          device: { os: "Android", geo: { country: "USA" }, ip: "192.0.2.1" },
        };
        const response = await fetch(`${nodes[n % 2].url}/openrtb2/auction`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request), signal: AbortSignal.timeout(20_000) });
        if (response.status !== 200) {
          await response.body?.cancel();
          continue;
        }
        const body = (await response.json()) as { seatbid: { bid: { price: number; burl: string }[] }[] };
        for (const seat of body.seatbid) for (const bid of seat.bid) won.push({ burl: bid.burl, price: bid.price });
      }
      // fill 1: nearly every auction has a winner (a bidder slowed by a busy machine may miss one).
      expect(won.length).toBeGreaterThanOrEqual(AUCTIONS / 2);
      const half = Math.ceil(won.length / 2);

      // At once: both nodes get the call in the same moment; both acknowledge it (each counts it as far as it knows).
      const concurrent = await Promise.all(won.slice(0, half).flatMap(({ burl }) => [bill(nodes[0], burl), bill(nodes[1], burl)]));
      expect(concurrent.every((status) => status === 204)).toBe(true);
      // One after the other: the second node gets it once the first has acknowledged it.
      for (const { burl } of won.slice(half)) {
        expect(await bill(nodes[1], burl)).toBe(204);
        expect(await bill(nodes[0], burl)).toBe(204);
      }

      store = await openStore({ store: "clickhouse", clickhouseUrl });
      const metrics: ReportQuery["metrics"] = ["impression", "revenue"];
      const window = { start: `${firstDay}T00:00:00`, filters: {}, limit: 1000, dimensions: [], metrics };
      const supplyReport = async () => (await store!.report({ ...window, end: `${new Date().toISOString().slice(0, 10)}T23:59:59`, side: "supply", scope: { publisher_ids: [PUBLISHER] } })).rows[0] as Record<string, number>;
      // Later: once the nodes' flushes have put every call in the store, every token again to both (bounded wait).
      const deadline = Date.now() + 60_000;
      while ((await supplyReport()).impression < won.length && Date.now() < deadline) await new Promise((done) => setTimeout(done, 250));
      for (const { burl } of won) for (const node of nodes) expect(await bill(node, burl)).toBe(204);

      // SIGTERM: each node flushes what it holds, then exits 0.
      for (const node of nodes) expect(await stopServerProcess(node)).toBe(0);
      const revenue = won.reduce((sum, { price }) => sum + price, 0) / 1000;
      const supply = await supplyReport();
      expect(supply.impression).toBe(won.length);
      expect(Math.abs(supply.revenue - revenue)).toBeLessThan(1e-6);
      const demand = (await store.report({ ...window, end: `${new Date().toISOString().slice(0, 10)}T23:59:59`, side: "demand", scope: { bidder_id: BIDDER } })).rows[0] as Record<string, number>;
      expect(demand.impression).toBe(won.length);
      expect(Math.abs(demand.revenue - revenue)).toBeLessThan(1e-6);
    });
  },
);
