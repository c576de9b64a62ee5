/**
 * Dictionary codes of the values reports filter on (the account's publishers, filter values),
 * cached per store: a report then filters the fact tables on integers with no dictionary join. A
 * committed code never changes meaning (dictionary rows are only ever added), so a cached code
 * never goes stale; a value not found is looked up again next time (a load may add it).
 */
import { LIST, VARCHAR, listValue, type DuckDBConnection } from "@duckdb/node-api";
import { dictionaryOf } from "./layout.js";

/** Past this many cached codes per dictionary the cache starts over, bounding memory. */
const MAX_CACHED = 1_000_000;

/** The codes of dictionary values, cached per store. */
export class DictionaryCodes {
  private readonly codes = new Map<string, Map<string, number>>();

  /** Looks up (once) every value of `wanted` not cached yet; afterwards `codesOf` answers from the cache. */
  async load(connection: DuckDBConnection, wanted: ReadonlyMap<string, readonly string[]>): Promise<void> {
    for (const [dimension, values] of wanted) {
      let known = this.codes.get(dimension);
      if (!known || known.size > MAX_CACHED) this.codes.set(dimension, (known = new Map()));
      const missing = values.filter((v) => !known!.has(v));
      if (missing.length === 0) continue;
      const reader = await connection.runAndReadAll(`SELECT value, code FROM ${dictionaryOf(dimension)} WHERE list_contains($1, value)`, [listValue(missing)], [LIST(VARCHAR)]);
      for (const [value, code] of reader.getRowsJS()) known.set(String(value), Number(code));
    }
  }

  /** The codes of the values that have one (after `load`). */
  codesOf(dimension: string, values: readonly string[]): number[] {
    const known = this.codes.get(dimension);
    const out: number[] = [];
    for (const value of new Set(values)) {
      const code = known?.get(value);
      if (code !== undefined) out.push(code);
    }
    return out;
  }
}
