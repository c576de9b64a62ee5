// The versioned fact-key codec (generated/reports/facts.ts) where it is used: spool lines replayed
// after a crash (test/fixtures/fact-key/spool-lines.json) and NDJSON facts (ndjson-lines.json), of
// every format and version written so far; a newer version is refused, saying so. The billing
// token's keys are in test/auction/billing-token.test.ts. Plus a round trip of the codec itself.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { decodeIncrement, demandKeyOf, encodeAuctionKey, decodeAuctionKey, encodeDemandIncrement, encodeSupplyIncrement, FACT_FIELDS, FACT_KEY_VERSION, factFields, reportModel, supplyKeyOf, type Side } from "@adxkit/bindings/reports";
import { Exchange } from "../../service/auction/exchange.js";
import { FactAggregator, SpoolVersionError } from "../../service/events/facts.js";
import { Spool } from "../../service/events/spool.js";
import { parseFactLine } from "../../service/store/fact.js";
import { BILLING_KEYS, memorySink } from "../auction/helpers.js";

const fixture = <T>(name: string): T[] => JSON.parse(readFileSync(new URL(`../fixtures/fact-key/${name}`, import.meta.url), "utf8"));

describe("spool lines of every version", () => {
  test.each(fixture<{ name: string; line: unknown; facts?: object[]; tokens?: object[]; refused?: string }>("spool-lines.json"))("$name", async ({ line, facts, tokens, refused }) => {
    const sink = memorySink();
    const agg = new FactAggregator({ sink, flushMs: 60_000 });
    try {
      if (refused !== undefined) {
        expect(() => agg.replay(line)).toThrow(refused);
        return;
      }
      expect(agg.replay(line)).toEqual(tokens);
      await agg.flush();
      expect(sink.facts).toEqual(facts);
    } finally {
      await agg.close();
    }
  });
});

describe("a spool written by a newer adxkit", () => {
  test("the exchange refuses to start, naming the line, and leaves the spool as it is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-spool-version-"));
    try {
      const writer = Spool.open(dir);
      writer.start();
      await writer.append({ v: FACT_KEY_VERSION + 1, f: [["d", "2026-01-01T10:00:00", "dsp", 1, 2, 1, 0, 0, 0]] });
      await writer.close();
      const exchange = new Exchange({ bidders: [], sink: memorySink(), billingKeys: BILLING_KEYS, publicUrl: "http://127.0.0.1", spoolDir: dir, openAuction: true });
      try {
        await expect(exchange.recover()).rejects.toThrow(SpoolVersionError);
        await expect(exchange.recover()).rejects.toThrow(/line 1: fact-key version \d+ is newer than this adxkit reads/);
      } finally {
        await exchange.close();
      }
      expect([...Spool.open(dir).replay()]).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("NDJSON facts of every version", () => {
  test.each(fixture<{ name: string; line: string; refused?: string }>("ndjson-lines.json"))("$name", ({ line, refused }) => {
    if (refused !== undefined) expect(() => parseFactLine(line, 7)).toThrow(refused);
    else expect(parseFactLine(line, 7)).toEqual(Object.fromEntries(Object.entries(JSON.parse(line)).filter(([k]) => k !== "v")));
  });
});

describe("the codec", () => {
  const text = fc.string({ maxLength: 12 });
  const code = fc.integer({ min: 0, max: 2_147_483_647 });
  const hour = fc.integer({ min: 0, max: 500_000 }).map((h) => new Date(h * 3_600_000).toISOString().slice(0, 13) + ":00:00");
  const key = fc.record({ date_hour: hour, publisher_id: text, app_bundle_id: text, placement_id: text, ad_format: code, platform: code, country: fc.constantFrom("", "USA", "DEU"), bidder_id: text.filter((t) => t.length > 0) });
  const counts = fc.record({ request: fc.nat(), response: fc.nat(), impression: fc.nat(), revenue: fc.nat() });

  test("an increment or an auction key of the current version reads back as written", () => {
    fc.assert(
      fc.property(key, counts, (k, c) => {
        expect(decodeIncrement(encodeSupplyIncrement(supplyKeyOf(k), c), FACT_KEY_VERSION)).toEqual({ side: "supply", key: supplyKeyOf(k), counts: c });
        expect(decodeIncrement(encodeDemandIncrement(demandKeyOf(k), c), FACT_KEY_VERSION)).toEqual({ side: "demand", key: demandKeyOf(k), counts: c });
        expect(decodeAuctionKey(JSON.parse(JSON.stringify(encodeAuctionKey(k))))).toEqual(k);
      }),
      { numRuns: 200 },
    );
  });

  test("factFields writes a fact's key, then its counters, in the model's order, whatever the array held before", () => {
    for (const side of ["supply", "demand"] as Side[]) expect(FACT_FIELDS[side]).toEqual([...reportModel.sides[side].key, ...reportModel.counters.map((c) => c.name)]);
    const out: (string | number)[] = [];
    fc.assert(
      fc.property(key, counts, fc.constantFrom<Side>("supply", "demand"), (k, c, side) => {
        const fact = { side, ...(side === "supply" ? supplyKeyOf(k) : demandKeyOf(k)), ...c } as Parameters<typeof factFields>[0];
        factFields(fact, out);
        const record = fact as unknown as Record<string, string | number>;
        expect(out.slice(0, FACT_FIELDS[side].length)).toEqual(FACT_FIELDS[side].map((name) => record[name]));
      }),
      { numRuns: 200 },
    );
  });
});
