// The versioned fact-key codec (generated/reports/facts.ts) where it is used: spool lines replayed
// after a crash (test/fixtures/fact-key/spool-lines.json) and NDJSON facts (ndjson-lines.json), of
// every format and version written so far; a newer version is refused, saying so. The billing
// token's keys are in test/auction/billing-token.test.ts. Plus a round trip of the codec itself.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ByteReader, ByteWriter, decodeIncrement, demandKeyOf, readAuctionKeyBytes, writeAuctionKeyBytes, encodeAuctionKey, decodeAuctionKey, encodeDemandIncrement, encodeSupplyIncrement, FACT_FIELD_BYTES, FACT_FIELDS, FACT_KEY_VERSION, reportModel, supplyKeyOf, writeFactRow, type Fact, type FactCoders, type FactColumns, type Side } from "@adxkit/bindings/reports";
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
        // The binary form (the billing token's): the same positional key back, then the same key.
        const w = new ByteWriter(16);
        expect(writeAuctionKeyBytes(w, encodeAuctionKey(k))).toBe(true);
        const r = new ByteReader(w.bytes, 0, w.at);
        expect(readAuctionKeyBytes(r)).toEqual(encodeAuctionKey(k));
        expect(r.at).toBe(w.at);
      }),
      { numRuns: 200 },
    );
  });

  test("the binary form refuses what it cannot spell, and says why a key does not read", () => {
    const k = encodeAuctionKey({ date_hour: "2026-01-01T10:00:00", publisher_id: "p", app_bundle_id: "a", placement_id: "", ad_format: 1, platform: 2, country: "USA", bidder_id: "d" });
    for (const bad of [[2, ...k.slice(1)], k.slice(0, -1), k.map((v, i) => (i === 1 ? "2026-01-01T10:30:00" : v)), k.map((v, i) => (i === 5 ? -1 : v)), k.map((v, i) => (i === 2 ? 7 : v)), k.map((v, i) => (i === 2 ? "\uDC00" : v))]) {
      expect(writeAuctionKeyBytes(new ByteWriter(), bad)).toBe(false);
    }
    const w = new ByteWriter(1);
    expect(writeAuctionKeyBytes(w, k)).toBe(true);
    expect(Buffer.from(w.bytes.subarray(0, w.at)).toString("hex")).toBe("019afb1d01700161000102035553410164");
    expect(readAuctionKeyBytes(new ByteReader(w.bytes, 0, w.at - 2))).toBe("the auction key's string 8 does not read");
    expect(readAuctionKeyBytes(new ByteReader(Buffer.from([FACT_KEY_VERSION + 1]), 0, 1))).toMatch(/newer than this adxkit reads/);
  });

  test("writeFactRow writes each field of a fact into its own column, as the model's type holds it, row after row", () => {
    for (const side of ["supply", "demand"] as Side[]) expect(FACT_FIELDS[side]).toEqual([...reportModel.sides[side].key, ...reportModel.counters.map((c) => c.name)]);
    const capacity = 8;
    const bigCounts = fc.record({ request: fc.maxSafeNat(), response: fc.maxSafeNat(), impression: fc.maxSafeNat(), revenue: fc.double({ min: 0, max: 1e12, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(fc.tuple(key, bigCounts, fc.constantFrom<Side>("supply", "demand")), { minLength: 1, maxLength: capacity }), (drawn) => {
        const columns = Object.fromEntries(
          (["supply", "demand"] as Side[]).map((side) => [
            side,
            Object.fromEntries(FACT_FIELDS[side].map((name, at) => [name, reportModel.counters.find((c) => c.name === name)?.type === "money" ? new Float64Array(capacity) : new Int32Array((capacity * FACT_FIELD_BYTES[side][at]) / 4)])),
          ]),
        ) as unknown as FactColumns;
        const seen = new Map<string, string[]>();
        const coders = {
          hour: { micros: (h: string) => Date.parse(`${h}Z`) * 1000 },
          text: new Proxy({}, { get: (_, dimension: string) => ({ code: (t: string) => { const list = seen.get(dimension) ?? seen.set(dimension, []).get(dimension)!; return list.includes(t) ? list.indexOf(t) : list.push(t) - 1; } }) }),
        } as FactCoders;
        const rows = { supply: 0, demand: 0 };
        const facts = drawn.map(([k, c, side]) => ({ side, ...(side === "supply" ? supplyKeyOf(k) : demandKeyOf(k)), ...c }) as Fact);
        for (const fact of facts) writeFactRow(fact, columns, rows, coders);
        const at = { supply: 0, demand: 0 };
        for (const fact of facts) {
          const row = at[fact.side]++;
          const record = fact as unknown as Record<string, string | number>;
          for (const name of FACT_FIELDS[fact.side]) {
            const column = (columns[fact.side] as unknown as Record<string, Int32Array | Float64Array>)[name];
            const type: string = reportModel.dimensions[name]?.type ?? reportModel.counters.find((c) => c.name === name)!.type;
            const int64 = () => column[2 * row + 1] * 2 ** 32 + (column[2 * row] >>> 0);
            if (type === "hour") expect(int64()).toBe(Date.parse(`${record[name]}Z`) * 1000);
            else if (type === "count") expect(int64()).toBe(record[name]);
            else if (type === "string") expect(seen.get(name)![column[row]]).toBe(record[name]);
            else expect(column[row]).toBe(record[name]);
          }
        }
        expect(rows).toEqual({ supply: at.supply, demand: at.demand });
      }),
      { numRuns: 200 },
    );
  });
});
