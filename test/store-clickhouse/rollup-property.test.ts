// Property on ClickHouse: the rollups (materialized views into SummingMergeTree) change no answer.
// Two stores on one fresh database, one reading rollups wherever the plan may, the other only the
// hourly facts: every random query gives the same rows in both. Small and staged loads alike.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rollupFactArb, rollupQueryArb } from "../store/rollup-model.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason } from "./server.js";

const reason = await skipReason();
const RUNS = Number(process.env.ADXKIT_CLICKHOUSE_PROPERTY_RUNS ?? 15);

describe.skipIf(reason !== undefined)(`rollups on ClickHouse at ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`, () => {
  it("give the same rows as the hourly facts alone", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rollupFactArb, { maxLength: 150 }), fc.integer({ min: 1, max: 3 }), fc.array(rollupQueryArb, { minLength: 1, maxLength: 6 }), async (facts, loads, queries) => {
        // chunkRows 16: larger loads also go through tables of their own (the load sums the rollups; small ones fill them through the views).
        const withRollups = await openTestStore({ chunkRows: 16 });
        const hourlyOnly = await openTestStore({ database: withRollups.database, rollups: false });
        try {
          const size = Math.ceil(facts.length / loads);
          for (let i = 0; i < facts.length; i += size) await withRollups.ingest(facts.slice(i, i + size));
          for (const query of queries) expect(await withRollups.report(query)).toEqual(await hourlyOnly.report(query));
        } finally {
          await hourlyOnly.close();
          await disposeTestStore(withRollups);
        }
      }),
      { numRuns: RUNS },
    );
  }, 180_000);
});
