// Billed impressions on ClickHouse (service/store/clickhouse/billed.ts): given by several stores
// on one database (as several exchange nodes would), at once and one after the other, a token
// counts once in the supply and demand reports, by hour, by day and by month (rollups beside the
// billed rows), while facts of the same key still add up.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BilledImpression } from "../../service/store/index.js";
import { demand, demandQuery, supply, supplyQuery } from "../store/helpers.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason, type TestStore } from "./server.js";

const reason = await skipReason();

/** A billed impression of token `id` at CPM `cpm`: one impression and cpm / 1000 of revenue on both sides. */
function billed(id: string, cpm: number, hour = "2026-10-01T05:00:00"): BilledImpression {
  const counts = { request: 0, response: 0, impression: 1, revenue: cpm / 1000 };
  return { id, expiresAt: Date.now() + 3_600_000, facts: [supply({ date_hour: hour, ...counts }), demand({ date_hour: hour, ...counts })] };
}

const metrics = ["request", "impression", "revenue"] as const;

describe.skipIf(reason !== undefined)(`billed impressions on ClickHouse at ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`, () => {
  let nodes: TestStore[] = [];
  beforeEach(async () => {
    const first = await openTestStore();
    nodes = [first, await openTestStore({ database: first.database })];
  });
  afterEach(async () => {
    await nodes[1]?.close();
    await disposeTestStore(nodes[0]);
  });

  const reports = async (store: TestStore, dimensions: ("date" | "date_hour")[] = []) => ({
    supply: (await store.report(supplyQuery({ metrics: [...metrics], dimensions }))).rows,
    demand: (await store.report(demandQuery({ metrics: [...metrics], dimensions }))).rows,
  });

  it("says so, so the exchange gives billed impressions apart", () => {
    expect(nodes[0].countsBilledOnce).toBe(true);
  });

  it("counts a token once whichever store gives it, at once or later, beside the facts", async () => {
    // The facts of the auctions (requests) and three tokens: a given by both at once, b by one
    // then the other, c by one store twice.
    await Promise.all([
      nodes[0].ingest([supply({ impression: 0, revenue: 0 }), demand({ impression: 0, revenue: 0 })], { billed: [billed("a", 2.5)] }),
      nodes[1].ingest([supply({ impression: 0, revenue: 0 })], { billed: [billed("a", 2.5)] }),
    ]);
    await nodes[0].ingest([], { billed: [billed("b", 1.25)] });
    await nodes[1].ingest([], { billed: [billed("b", 1.25), billed("c", 4)] });
    await nodes[1].ingest([], { billed: [billed("c", 4)] });
    const once = { supply: [{ request: 200, impression: 3, revenue: 0.00775 }], demand: [{ request: 100, impression: 3, revenue: 0.00775 }] };
    for (const store of nodes) expect(await reports(store)).toEqual(once);
    // Also once after the engine merged the parts (OPTIMIZE … FINAL), and grouped by hour and by day.
    for (const side of ["supply", "demand"]) await optimize(nodes[0], `${side}_billed`);
    expect(await reports(nodes[1])).toEqual(once);
    const byHour = await reports(nodes[0], ["date_hour"]);
    expect(byHour.supply).toEqual([{ date_hour: "2026-10-01T05:00:00", ...once.supply[0] }]);
    const byDay = await reports(nodes[0], ["date"]);
    expect(byDay.demand).toEqual([{ date: "2026-10-01", ...once.demand[0] }]);
  });

  it("keeps tokens of other hours and keys apart, and reads them from rollup ranges too", async () => {
    await nodes[0].ingest([supply({ date_hour: "2026-10-02T10:00:00" })], { billed: [billed("x", 1, "2026-10-02T10:00:00"), billed("y", 3, "2026-10-20T23:00:00")] });
    await nodes[1].ingest([], { billed: [billed("y", 3, "2026-10-20T23:00:00"), billed("x", 1, "2026-10-02T10:00:00")] });
    // The month (read from the monthly rollup for the facts) and a range ending mid-day.
    const month = await nodes[0].report(supplyQuery({ metrics: ["impression", "revenue"] }));
    expect(month.rows).toEqual([{ impression: 62, revenue: 1.504 }]);
    const partial = await nodes[1].report(supplyQuery({ start: "2026-10-02T11:00:00", end: "2026-10-20T23:59:59", metrics: ["impression", "revenue"] }));
    expect(partial.rows).toEqual([{ impression: 1, revenue: 0.003 }]);
    const other = await nodes[0].report(supplyQuery({ metrics: ["impression"], scope: { publisher_ids: ["pub-2"] } }));
    expect(other.rows).toEqual([{ impression: 0 }]);
  });
});

/** Merges a table's parts now (what the engine does in the background, some time). */
async function optimize(store: TestStore, table: string): Promise<void> {
  const { createClient } = await import("@clickhouse/client");
  const client = createClient({ url: CLICKHOUSE_URL });
  try {
    await client.command({ query: `OPTIMIZE TABLE ${store.database}.${table} FINAL` });
  } finally {
    await client.close();
  }
}
