// Settling billed impressions on ClickHouse (service/store/clickhouse/settle.ts): a due day's
// billed rows become per-day sums that reports read instead; reports give the same rows before
// and after settling, whichever store settles, however often and at once; a billed row written
// late for a settled day counts (once); a day not due is not settled.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReportQuery, SettleProgress } from "../../service/store/index.js";
import { demand, demandQuery, supply, supplyQuery } from "../store/helpers.js";
import { billed, daysAgo } from "./billed-helpers.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason, type TestStore } from "./server.js";

const reason = await skipReason();

/** Five days ago to today, with the whole-range queries of both sides by the given dimensions. */
const first = daysAgo(5);
const today = daysAgo(0);
const range = { start: `${first}T00:00:00`, end: `${today}T23:59:59` };
const queries: ReportQuery[] = [
  supplyQuery({ ...range, metrics: ["impression", "revenue"] }),
  supplyQuery({ ...range, metrics: ["impression", "revenue", "ecpm"], dimensions: ["date", "placement_id"] }),
  supplyQuery({ ...range, metrics: ["impression"], dimensions: ["date_hour"] }),
  // Mid-day edges: the first and last days are read row by row.
  supplyQuery({ start: `${first}T06:00:00`, end: `${daysAgo(1)}T12:59:59`, metrics: ["impression", "revenue"], dimensions: ["date"] }),
  supplyQuery({ ...range, metrics: ["impression"], filters: { placement_id: ["pl-2"] } }),
  demandQuery({ ...range, metrics: ["impression", "revenue"], dimensions: ["date"] }),
];

describe.skipIf(reason !== undefined)(`settling billed impressions on ClickHouse at ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`, () => {
  let nodes: TestStore[] = [];
  beforeEach(async () => {
    const one = await openTestStore();
    nodes = [one, await openTestStore({ database: one.database })];
    // Facts and billed impressions over six days, some tokens written by both stores.
    await nodes[0].ingest([supply({ date_hour: `${daysAgo(3)}T04:00:00` }), demand({ date_hour: `${daysAgo(3)}T04:00:00` })], {
      billed: [billed("a", 2, `${first}T05:00:00`), billed("b", 3, `${daysAgo(3)}T23:00:00`, "pl-2"), billed("c", 1, `${today}T00:00:00`)],
    });
    await nodes[1].ingest([], { billed: [billed("a", 2, `${first}T05:00:00`), billed("d", 5, `${daysAgo(1)}T13:00:00`, "pl-2")] });
  });
  afterEach(async () => {
    await nodes[1]?.close();
    await disposeTestStore(nodes[0]);
  });

  const reports = (store: TestStore) => Promise.all(queries.map(async (q) => (await store.report(q)).rows));
  const settle = (store: TestStore) => store.settleBilled!();

  it("settles the due days in order, not today, and reports stay the same", async () => {
    const before = await reports(nodes[0]);
    expect(before[0]).toEqual([{ impression: 64, revenue: 1.511 }]);
    const steps: SettleProgress[] = [];
    const run = await nodes[0].settleBilled!({ onProgress: (step) => steps.push(step) });
    // Each step is told before and after, and the steps cover exactly the days settled.
    expect(steps.filter((_, i) => i % 2 === 1)).toEqual(steps.filter((_, i) => i % 2 === 0).map((step) => ({ ...step, done: true })));
    expect(steps.filter((step) => step.done).map(({ side, first, last }) => [side, first, last])).toEqual([
      ["supply", run.supply[0], run.supply.at(-1)],
      ["demand", run.demand[0], run.demand.at(-1)],
    ]);
    // Today (and, early in the day, yesterday) is not due: its tokens may still be billed.
    expect(run.supply[0]).toBe(first);
    expect(run.supply).not.toContain(today);
    expect(run.demand).toEqual(run.supply);
    expect(await reports(nodes[0])).toEqual(before);
    expect(await reports(nodes[1])).toEqual(before);
    // Nothing more is due: a second run settles no new day (only, again, days whose late marks
    // share the second the first run began reading in: the clock's tie settles again, to be safe).
    const again = await settle(nodes[1]);
    for (const side of ["supply", "demand"] as const) for (const day of again[side]) expect(run[side]).toContain(day);
    expect(await reports(nodes[0])).toEqual(before);
  });

  it("reads settled days from their sums, not the billed rows", async () => {
    await settle(nodes[0]);
    // A row written behind the store's back (no late mark): a report reading the rows would count it.
    const { createClient } = await import("@clickhouse/client");
    const client = createClient({ url: CLICKHOUSE_URL });
    try {
      await client.command({ query: `INSERT INTO ${nodes[0].database}.supply_billed SELECT toDateTime('${daysAgo(3)} 10:00:00', 'UTC'), 'pub-1', 'x', 'pl-1', 1, 2, 'USA', 0, 0, 1, 0.5, 'raw'` });
    } finally {
      await client.close();
    }
    expect((await nodes[0].report(queries[0])).rows).toEqual([{ impression: 64, revenue: 1.511 }]);
    // By hour, the settled sums cannot answer: the rows are read, the raw one with them.
    const byHour = (await nodes[0].report(queries[2])).rows;
    expect(byHour.reduce((sum, row) => sum + Number(row.impression), 0)).toBe(65);
  });

  it("gives the same reports when both stores settle at once, and again", async () => {
    const before = await reports(nodes[0]);
    const [one, two] = await Promise.all([settle(nodes[0]), settle(nodes[1])]);
    expect(one.supply.length + two.supply.length).toBeGreaterThan(0);
    expect(await reports(nodes[1])).toEqual(before);
    await Promise.all([settle(nodes[1]), settle(nodes[0])]);
    expect(await reports(nodes[0])).toEqual(before);
  });

  it("counts a billed row written late for a settled day, once", async () => {
    await settle(nodes[0]);
    // A spool replayed after a crash: token b again (counted already) and a new token e.
    const lateBefore = nodes[1].lateBilledRows!();
    await nodes[1].ingest([], { billed: [billed("b", 3, `${daysAgo(3)}T23:00:00`, "pl-2"), billed("e", 7, `${daysAgo(3)}T08:00:00`)] });
    // Seen as late, each on both sides (/metrics adxkit_settle_late_billed_rows_total).
    expect(nodes[1].lateBilledRows!()).toEqual({ supply: lateBefore.supply + 2, demand: lateBefore.demand + 2 });
    for (const store of nodes) expect((await store.report(queries[0])).rows).toEqual([{ impression: 65, revenue: 1.518 }]);
    // The next run (any store) finds the day settled since its mark: nothing changes.
    await settle(nodes[0]);
    expect((await nodes[1].report(queries[4])).rows).toEqual([{ impression: 2 }]);
    expect((await nodes[0].report(queries[0])).rows).toEqual([{ impression: 65, revenue: 1.518 }]);
  });
});
