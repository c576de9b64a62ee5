// Property on ClickHouse: for random facts and random queries, store.report() equals the plain
// computation of report-model.ts (copied from test/store/report-property.test.ts). A fresh
// database per run; fewer runs than on DuckDB, since each run creates and drops a schema.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { demandFactArb, expected, queryArb, supplyFactArb } from "../store/report-model.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason } from "./server.js";

const reason = await skipReason();
const RUNS = Number(process.env.ADXKIT_CLICKHOUSE_PROPERTY_RUNS ?? 25);

describe.skipIf(reason !== undefined)(`report property on ClickHouse at ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`, () => {
  for (const forceLiterals of [false, true]) {
    it(`matches the plain computation for random facts and queries (${forceLiterals ? "forced literals" : "server default"})`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.oneof(supplyFactArb, demandFactArb), { maxLength: 120 }),
          fc.integer({ min: 1, max: 3 }),
          fc.array(queryArb, { minLength: 1, maxLength: 5 }),
          async (facts, loads, queries) => {
            // chunkRows 16: larger loads also go through tables of their own.
            const store = await openTestStore({ forceLiterals, chunkRows: 16 });
            try {
              const size = Math.ceil(facts.length / loads);
              for (let i = 0; i < facts.length; i += size) await store.ingest(facts.slice(i, i + size));
              for (const query of queries) expect(await store.report(query)).toEqual(expected(facts, query));
            } finally {
              await disposeTestStore(store);
            }
          },
        ),
        { numRuns: RUNS },
      );
    }, 120_000);
  }
});
