import { afterEach, describe, expect, test } from "vitest";
import { FactAggregator, type Fact } from "../../service/events/facts.js";
import { FactError } from "../../service/store/errors.js";
import { memorySink, waitFor } from "./helpers.js";

const supplyKey = { date_hour: "2026-01-01T10:00:00", publisher_id: "p", app_bundle_id: "a", placement_id: "t", ad_format: 1, platform: 2, country: "USA" };
const demandKey = { date_hour: "2026-01-01T10:00:00", bidder_id: "dsp", ad_format: 1, platform: 2 };
const open: FactAggregator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((a) => a.close()));
});
function aggregator(sink: { ingest(f: Iterable<Fact>): Promise<number> }, flushMs = 60_000) {
  const a = new FactAggregator({ sink, flushMs });
  open.push(a);
  return a;
}

describe("fact aggregator", () => {
  test("adds counts per key and writes one fact per key", async () => {
    const sink = memorySink();
    const agg = aggregator(sink);
    agg.supply(supplyKey, { request: 1 });
    agg.supply(supplyKey, { request: 1, response: 1 });
    agg.supply({ ...supplyKey, placement_id: "other" }, { request: 1 });
    agg.demand(demandKey, { request: 1 });
    agg.supply(supplyKey, { impression: 1, cpmMicros: 1_510_000 });
    agg.demand(demandKey, { response: 1, impression: 1, cpmMicros: 1_510_000 });
    expect(await agg.flush()).toBe(3);
    expect(sink.facts).toContainEqual({ side: "supply", ...supplyKey, request: 2, response: 1, impression: 1, revenue: 0.00151 });
    expect(sink.facts).toContainEqual({ side: "demand", ...demandKey, request: 1, response: 1, impression: 1, revenue: 0.00151 });
    expect(await agg.flush()).toBe(0);
    expect(sink.calls).toBe(1);
  });

  test("flushes on its timer", async () => {
    const sink = memorySink();
    const agg = aggregator(sink, 20);
    agg.demand(demandKey, { request: 1 });
    await waitFor(() => sink.facts.length === 1, 2000, "timer flush");
  });

  test("close flushes what is pending", async () => {
    const sink = memorySink();
    const agg = new FactAggregator({ sink, flushMs: 60_000 });
    agg.demand(demandKey, { request: 3 });
    await agg.close();
    expect(sink.facts).toEqual([{ side: "demand", ...demandKey, request: 3, response: 0, impression: 0, revenue: 0 }]);
  });

  test("a failing store keeps the facts for the next flush", async () => {
    const sink = memorySink();
    let fail = true;
    const flaky = { ingest: async (facts: Iterable<Fact>) => (fail ? Promise.reject(new Error("store down")) : sink.ingest(facts)) };
    const agg = aggregator(flaky);
    agg.demand(demandKey, { request: 1 });
    expect(await agg.flush()).toBe(0);
    agg.demand(demandKey, { request: 1 });
    fail = false;
    expect(await agg.flush()).toBe(1);
    expect(sink.facts[0].request).toBe(2);
    expect(agg.stats().failedFlushes).toBe(1);
  });

  test("a fact the store refuses is dropped, the rest still loads", async () => {
    const sink = memorySink();
    const picky = {
      ingest: async (facts: Iterable<Fact>) => {
        const list = [...facts];
        const bad = list.findIndex((f) => f.side === "supply" && f.placement_id === "");
        if (bad >= 0) throw new FactError(bad + 1, 'field "placement_id" must not be empty');
        return sink.ingest(list);
      },
    };
    const agg = aggregator(picky);
    agg.supply({ ...supplyKey, placement_id: "" }, { request: 1 });
    agg.supply(supplyKey, { request: 1 });
    agg.demand(demandKey, { request: 1 });
    expect(await agg.flush()).toBe(2);
    expect(agg.stats().factsDropped).toBe(1);
  });
});
