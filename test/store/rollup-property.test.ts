// Property: the rollups change no answer. The same facts (loaded in several parts) in two DuckDB
// stores, one reading rollups wherever the plan may, the other only the hourly facts: every
// random query gives the same rows and total in both. 40 runs take a few seconds on an idle
// machine; the timeout leaves a busy one room.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openStore } from "../../service/store/index.js";
import { rollupFactArb, rollupQueryArb } from "./rollup-model.js";

describe("rollups on DuckDB", () => {
  it("give the same rows as the hourly facts alone", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rollupFactArb, { maxLength: 150 }), fc.integer({ min: 1, max: 3 }), fc.array(rollupQueryArb, { minLength: 1, maxLength: 6 }), async (facts, loads, queries) => {
        const [withRollups, hourlyOnly] = await Promise.all([openStore({ db: ":memory:" }), openStore({ db: ":memory:", rollups: false })]);
        try {
          const size = Math.ceil(facts.length / loads);
          for (let i = 0; i < facts.length; i += size) {
            await withRollups.ingest(facts.slice(i, i + size));
            await hourlyOnly.ingest(facts.slice(i, i + size));
          }
          for (const query of queries) expect(await withRollups.report(query)).toEqual(await hourlyOnly.report(query));
        } finally {
          await Promise.all([withRollups.close(), hourlyOnly.close()]);
        }
      }),
      { numRuns: 40 },
    );
  }, 240_000);
});
