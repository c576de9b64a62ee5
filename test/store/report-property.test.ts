// Property: for random facts (loaded in several parts) and random queries, the store's report
// equals the plain computation of report-model.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openStore } from "../../service/store/index.js";
import { demandFactArb, expected, queryArb, supplyFactArb } from "./report-model.js";

// Each run opens a store, loads and queries it: 50 runs take a few seconds alone, about 15 s
// beside two CPU-bound processes (npm run test:busy), well inside the test's own timeout.
describe("report property", () => {
  it("matches the plain computation for random facts and queries", { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(supplyFactArb, demandFactArb), { maxLength: 120 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(queryArb, { minLength: 1, maxLength: 5 }),
        async (facts, loads, queries) => {
          const store = await openStore({ db: ":memory:" });
          try {
            // Several loads, so same-key facts also meet across loads and rollups.
            const size = Math.ceil(facts.length / loads);
            for (let i = 0; i < facts.length; i += size) await store.ingest(facts.slice(i, i + size));
            for (const query of queries) expect(await store.report(query)).toEqual(expected(facts, query));
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 50 },
    );
  });
});
