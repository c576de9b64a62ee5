// FactBlockEncoder: each string coded once per load (its code its place among the strings seen),
// each block listing the strings it coded first; hours as microseconds. Decoding the columns back
// gives the facts as given, whatever repeats (fixtures/fact-blocks).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FACT_FIELDS, reportModel, type Fact, type Side } from "@adxkit/bindings/reports";
import { FactBlockEncoder, Held, SIDES, type FactBlock } from "../../service/store/fact-blocks.js";

const fixture = (name: string): { facts: Fact[] } => JSON.parse(readFileSync(new URL(`../fixtures/fact-blocks/${name}`, import.meta.url), "utf8"));

/** The facts a block holds, its string codes read through `strings` (every block's newStrings so far, in order). */
function decode(encoder: FactBlockEncoder, block: FactBlock, strings: Map<string, string[]>): Fact[] {
  for (const [dimension, fresh] of Object.entries(block.newStrings)) strings.set(dimension, [...(strings.get(dimension) ?? []), ...fresh]);
  const out: Fact[] = [];
  for (const side of SIDES as Side[]) {
    for (let row = 0; row < block.rows[side]; row++) {
      const fact: Record<string, unknown> = { side };
      for (const column of encoder.layout.sides[side]) {
        const words = new Int32Array(block.buffer, column.byteOffset, (block.capacity * column.bytesPerRow) / 4);
        const int64 = () => words[2 * row + 1] * 2 ** 32 + (words[2 * row] >>> 0);
        if (column.held === Held.Hour) fact[column.field] = new Date(int64() / 1000).toISOString().slice(0, 19);
        else if (column.held === Held.Text) fact[column.field] = strings.get(column.field)![words[row]];
        else if (column.held === Held.Count) fact[column.field] = int64();
        else if (column.held === Held.Money) fact[column.field] = new Float64Array(block.buffer, column.byteOffset, block.capacity)[row];
        else fact[column.field] = words[row];
      }
      out.push(fact as unknown as Fact);
    }
  }
  return out;
}

describe("FactBlockEncoder", () => {
  it("holds every field of FACT_FIELDS, as the report model types it", () => {
    const encoder = new FactBlockEncoder(4);
    for (const side of SIDES) expect(encoder.layout.sides[side].map((c) => c.field)).toEqual([...FACT_FIELDS[side]]);
    expect(encoder.layout.sides.supply.filter((c) => c.held === Held.Text).map((c) => c.field)).toEqual(reportModel.sides.supply.key.filter((d) => reportModel.dimensions[d].type === "string"));
  });

  it.each([2, 4, 6])("codes repeated strings and hours the same way in blocks of %i facts", (capacity) => {
    const { facts } = fixture("repeated-strings.json");
    const encoder = new FactBlockEncoder(capacity);
    const strings = new Map<string, string[]>();
    const decoded: Fact[] = [];
    encoder.start();
    for (const fact of facts) {
      expect(encoder.add(fact)).toBeUndefined();
      if (encoder.full) {
        decoded.push(...decode(encoder, encoder.take(), strings));
        encoder.start();
      }
    }
    if (encoder.holdsFacts) decoded.push(...decode(encoder, encoder.take(), strings));
    const bySide = (list: Fact[]) => SIDES.flatMap((side) => list.filter((f) => f.side === side));
    // Within a block each side's rows are apart, so the facts are compared as sets.
    expect(decoded).toHaveLength(facts.length);
    expect(bySide(decoded).map((f) => JSON.stringify(f)).sort()).toEqual(bySide(facts).map((f) => JSON.stringify(f)).sort());
    expect(strings.get("country")).toEqual(["", "USA"]);
    expect(strings.get("app_bundle_id")).toEqual(["a", "b"]);
  });
});
