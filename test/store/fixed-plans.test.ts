// Plans made with the values as literals (service/store/duckdb/fixed-plans.ts): the same answers
// as bound values, also after loads that a stale plan would miss, and no plan made or run from
// the cache while a load writes.
import { DATE, DuckDBDateValue, DuckDBTimestampValue, INTEGER, TIMESTAMP, VARCHAR, type DuckDBConnection } from "@duckdb/node-api";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FixedPlans, literalOf, REFRESHED_AFTER_LOAD, withLiterals } from "../../service/store/duckdb/fixed-plans.js";
import { DuckDBReportStore } from "../../service/store/duckdb/store.js";
import type { Fact } from "../../service/store/index.js";
import { supply, supplyQuery } from "./helpers.js";
import { demandFactArb, queryArb, supplyFactArb } from "./report-model.js";
import { answersOfTwoStores, text } from "./two-stores.js";

describe("values as literals", () => {
  it("integers of 32 bits, dates and whole-millisecond timestamps; anything else has none", () => {
    expect(literalOf(-7, INTEGER)).toBe("-7");
    expect(literalOf(2 ** 31 - 1, INTEGER)).toBe("2147483647");
    expect(literalOf(2 ** 31, INTEGER)).toBeUndefined();
    expect(literalOf(1.5, INTEGER)).toBeUndefined();
    expect(literalOf("1", INTEGER)).toBeUndefined();
    expect(literalOf(new DuckDBDateValue(20_392), DATE)).toBe("DATE '2025-10-31'");
    expect(literalOf(new DuckDBDateValue(-800_000), DATE)).toBeUndefined();
    expect(literalOf(new DuckDBTimestampValue(1_790_000_000_123_000n), TIMESTAMP)).toBe("TIMESTAMP '2026-09-21 14:13:20.123'");
    expect(literalOf(new DuckDBTimestampValue(1n), TIMESTAMP)).toBeUndefined();
    expect(literalOf("x", VARCHAR)).toBeUndefined();
    expect(withLiterals("SELECT $1 + $2, $10", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], Array(10).fill(INTEGER))).toBe("SELECT 1 + 2, 10");
    expect(withLiterals("SELECT $1, $2", [1, "x"], [INTEGER, VARCHAR])).toBeUndefined();
    expect(withLiterals("SELECT $2", [1], [INTEGER])).toBeUndefined();
  });
});

describe("reports from plans made with literals", () => {
  it("answer as bound values do, for random facts loaded in batches and queries asked after each", { timeout: 240_000 }, async () => {
    const batchArb = fc.array(fc.oneof(supplyFactArb, demandFactArb), { maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(fc.array(batchArb, { minLength: 1, maxLength: 3 }), fc.array(queryArb, { minLength: 1, maxLength: 5 }), async (batches, queries) => {
        const [fixed, bound] = await answersOfTwoStores([{ threads: 1 }, { threads: 1, fixedPlans: false }], batches as Fact[][], queries);
        expect(fixed).toEqual(bound);
      }),
      { numRuns: 15 },
    );
  });

  it("see a load that adds rows outside every column's range so far (a plan made before would answer nothing)", async () => {
    const store = await DuckDBReportStore.open(":memory:", { threads: 1 });
    try {
      const november = supplyQuery({ start: "2026-11-01T00:00:00", end: "2026-11-30T23:59:59", metrics: ["revenue", "request"] });
      const byDay = { ...november, dimensions: ["date" as const] };
      await store.ingest([supply({ date_hour: "2026-10-03T05:00:00" })]);
      for (let i = 0; i < 2; i++) {
        expect(text((await store.reportJson(november)).rowsJson)).toBe('[{"revenue":0.0,"request":0}]');
        expect((await store.reportJson(byDay)).total).toBe(0);
      }
      await store.ingest([supply({ date_hour: "2026-11-20T05:00:00", revenue: 2.5, request: 7 })]);
      expect(text((await store.reportJson(november)).rowsJson)).toBe('[{"revenue":2.5,"request":7}]');
      expect(text((await store.reportJson(byDay)).rowsJson)).toBe('[{"date":"2026-11-20","revenue":2.5,"request":7}]');
    } finally {
      await store.close();
    }
  });
});

/** A connection that prepares statements whose runs end when the test says. */
function fakeConnection() {
  const runs: (() => void)[] = [];
  let prepared = 0;
  const connection = {
    async prepare() {
      prepared++;
      return { run: () => new Promise((resolve) => runs.push(() => resolve("result"))), destroySync() {} };
    },
  } as unknown as DuckDBConnection;
  return { connection, runs, prepared: () => prepared };
}

describe("a load and the plans", () => {
  it("waits for the plans running, runs none meanwhile, and has them made again after it", async () => {
    const plans = new FixedPlans();
    const { connection, runs, prepared } = fakeConnection();
    const running = plans.run(connection, "SELECT $1", [1], [INTEGER]);
    await Promise.resolve();
    let writing = false;
    const load = plans.writing().then(() => (writing = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(writing).toBe(false);
    expect(await plans.run(connection, "SELECT $1", [1], [INTEGER])).toBeUndefined();
    runs.shift()!();
    expect(await running).toBe("result");
    await load;
    expect(writing).toBe(true);
    expect(await plans.run(connection, "SELECT $1", [1], [INTEGER])).toBeUndefined();
    plans.written();
    const again = plans.run(connection, "SELECT $1", [1], [INTEGER]);
    await new Promise((resolve) => setTimeout(resolve, 1));
    runs.shift()!();
    expect(await again).toBe("result");
    expect(prepared()).toBe(2);
    const cached = plans.run(connection, "SELECT $1", [1], [INTEGER]);
    await new Promise((resolve) => setTimeout(resolve, 1));
    runs.shift()!();
    await cached;
    expect(prepared()).toBe(2);
  });
});

describe("plans made again after a load", () => {
  /** Runs `text` through `plans`, ending its run at once. */
  async function runOnce(plans: FixedPlans, fake: ReturnType<typeof fakeConnection>, text: string) {
    const running = plans.run(fake.connection, text, [1], [INTEGER]);
    while (fake.runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    fake.runs.shift()!();
    return running;
  }

  it("makes again the plans run before the load, and the next runs of them plan nothing", async () => {
    const plans = new FixedPlans();
    const fake = fakeConnection();
    await runOnce(plans, fake, "SELECT $1 AS a");
    await runOnce(plans, fake, "SELECT $1 AS b");
    expect(fake.prepared()).toBe(2);
    expect(plans.refreshDue).toBe(false);
    await plans.writing();
    plans.written();
    expect(plans.refreshDue).toBe(true);
    expect(await plans.refresh(fake.connection)).toBe(2);
    expect(fake.prepared()).toBe(4);
    expect(plans.refreshDue).toBe(false);
    await runOnce(plans, fake, "SELECT $1 AS a");
    await runOnce(plans, fake, "SELECT $1 AS b");
    expect(fake.prepared()).toBe(4);
    // A load with no report since the one before has nothing to make again.
    await plans.writing();
    plans.written();
    await plans.writing();
    plans.written();
    expect(plans.refreshDue).toBe(false);
  });

  it("makes again only the latest texts run, and stops when a load begins", async () => {
    const plans = new FixedPlans();
    const fake = fakeConnection();
    for (let i = 0; i < REFRESHED_AFTER_LOAD + 3; i++) await runOnce(plans, fake, `SELECT $1 AS c${i}`);
    await plans.writing();
    plans.written();
    expect(await plans.refresh(fake.connection)).toBe(REFRESHED_AFTER_LOAD);
    for (let i = 0; i < 3; i++) await runOnce(plans, fake, `SELECT $1 AS c${i}`);
    await plans.writing();
    plans.written();
    const load = plans.writing();
    expect(await plans.refresh(fake.connection)).toBe(0);
    await load;
    plans.written();
  });

  it("none when plans with literals are off", async () => {
    const plans = new FixedPlans(false);
    const fake = fakeConnection();
    expect(await plans.run(fake.connection, "SELECT $1", [1], [INTEGER])).toBeUndefined();
    await plans.writing();
    plans.written();
    expect(plans.refreshDue).toBe(false);
  });
});
