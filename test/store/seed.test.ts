// The seed generator: deterministic, exact counts, valid facts, skewed like real traffic.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { factProblem, generateSeedFacts, seedPlan, type Fact, type SeedOptions, type SupplyFact } from "../../service/store/index.js";
import { Mulberry32, seededRandom } from "../../service/random.js";

/** mulberry32 as published, one draw a call: the oracle the repo's one generator is checked against. */
function referenceMulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const digests = JSON.parse(readFileSync(new URL("../fixtures/seed/digests.json", import.meta.url), "utf8")) as { cases: { options: SeedOptions; facts: number; sha256: string }[] };

describe("seed", () => {
  it("is deterministic: the same options give the same facts, another seed other facts", () => {
    const a = [...generateSeedFacts({ days: 2, rows: 500, seed: 7 })];
    const b = [...generateSeedFacts({ days: 2, rows: 500, seed: 7 })];
    const c = [...generateSeedFacts({ days: 2, rows: 500, seed: 8 })];
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it.each(digests.cases)("gives the facts it always gave ($options.rows rows, seed $options.seed)", ({ options, facts, sha256 }) => {
    const hash = createHash("sha256");
    let count = 0;
    for (const fact of generateSeedFacts(options)) {
      hash.update(`${JSON.stringify(fact)}\n`);
      count++;
    }
    expect(count).toBe(facts);
    expect(hash.digest("hex")).toBe(sha256);
  });

  // A load writes the seed's facts without checking them again (fact-block-worker.ts).
  it.each(digests.cases)("gives only facts the checks pass ($options.rows rows, seed $options.seed)", ({ options, facts }) => {
    let count = 0;
    for (const fact of generateSeedFacts(options)) {
      count++;
      const problem = factProblem(fact);
      if (problem) expect.fail(`fact ${count}: ${problem}`);
    }
    expect(count).toBe(facts);
  });

  it("draws mulberry32's numbers one at a time and in bulk, from any seed (the published one-call form as the reference)", () => {
    for (const seed of [0, 1, 7, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1]) {
      const reference = referenceMulberry32(seed);
      const expected = Array.from({ length: 1001 }, () => reference());
      const bulk = new Mulberry32(seed);
      const drawn = new Float64Array(1001);
      bulk.fill(drawn, 1000);
      expect(drawn[1000]).toBe(0);
      expect([...drawn.subarray(0, 1000)]).toEqual(expected.slice(0, 1000));
      // The state carries on from the bulk draws.
      expect(bulk.next()).toBe(expected[1000]);
      const single = seededRandom(seed);
      expect(Array.from({ length: 1001 }, () => single())).toEqual(expected);
    }
  });

  it("makes exactly `rows` supply facts and about a tenth as many demand facts, all valid, in range", () => {
    const facts = [...generateSeedFacts({ days: 3, rows: 1000 })];
    const plan = seedPlan({ days: 3, rows: 1000 });
    expect(plan).toEqual({ start: "2026-10-29T00:00:00", end: "2026-10-31T23:00:00", hours: 72, supplyRows: 1000, demandRows: 100 });
    expect(facts.filter((f) => f.side === "supply")).toHaveLength(1000);
    expect(facts.filter((f) => f.side === "demand")).toHaveLength(100);
    for (const fact of facts) {
      expect(factProblem(fact)).toBeUndefined();
      expect(fact.date_hour >= plan.start && fact.date_hour <= plan.end).toBe(true);
      expect(fact.response).toBeLessThanOrEqual(fact.request);
      expect(fact.impression).toBeLessThanOrEqual(fact.response);
    }
  });

  it("ends at a given day or hour", () => {
    expect(seedPlan({ days: 1, rows: 1, end: "2026-03-01" })).toMatchObject({ start: "2026-03-01T00:00:00", end: "2026-03-01T23:00:00" });
    expect(seedPlan({ days: 1, rows: 1, end: "2026-03-01T05:00:00" })).toMatchObject({ start: "2026-02-28T06:00:00", end: "2026-03-01T05:00:00" });
    expect(() => seedPlan({ days: 1, rows: 1, end: "2026-03-01T05:30:00" })).toThrow(RangeError);
    expect(() => seedPlan({ days: 0, rows: 1 })).toThrow(RangeError);
  });

  it("is skewed: a few apps and countries carry most of the traffic; formats differ in fill rate", () => {
    const facts = [...generateSeedFacts({ days: 7, rows: 20_000 })].filter((f): f is SupplyFact => f.side === "supply");
    const share = (key: (f: SupplyFact) => string, top: number) => {
      const totals = new Map<string, number>();
      let all = 0;
      for (const f of facts) {
        totals.set(key(f), (totals.get(key(f)) ?? 0) + f.request);
        all += f.request;
      }
      return [...totals.values()].sort((x, y) => y - x).slice(0, top).reduce((a, b) => a + b, 0) / all;
    };
    expect(share((f) => f.app_bundle_id, 20)).toBeGreaterThan(0.5);
    expect(share((f) => f.country, 5)).toBeGreaterThan(0.5);
    const fill = (format: number) => {
      const of = facts.filter((f: Fact) => f.ad_format === format);
      return of.reduce((a, f) => a + f.response, 0) / of.reduce((a, f) => a + f.request, 0);
    };
    expect(fill(1)).toBeGreaterThan(fill(3));
    expect(new Set(facts.map((f) => f.platform)).has(2)).toBe(true);
  });
});
