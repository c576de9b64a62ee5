/**
 * Dictionary codes of the values reports filter on (the account's publishers, filter values),
 * cached per store: a report then filters the fact tables on integers with no dictionary join. A
 * committed code never changes meaning (dictionary rows are only ever added), so a cached code
 * never goes stale. A value not found (an account's publisher without traffic yet) is not looked
 * up again until this store's next load, which may add it: one process holds the file
 * (connection.ts), so every load that adds values passes through the store. Without that, every
 * report of such an account paid one more statement (~1 ms of the event loop, docs/benchmarks.md).
 * After a load, a value the load's own dictionaries (dictionary.ts) still do not hold stays
 * absent: a server loads the exchange's facts each second, and an account with a publisher
 * without traffic otherwise paid the lookup again in its first report after every load.
 */
import { LIST, VARCHAR, listValue, type DuckDBConnection } from "@duckdb/node-api";
import { dictionaryOf } from "./layout.js";

/** Past this many cached codes per dictionary the cache starts over, bounding memory. */
const MAX_CACHED = 1_000_000;

/** The codes of dictionary values, cached per store. */
export class DictionaryCodes {
  private readonly codes = new Map<string, Map<string, number>>();
  /** Values found in no dictionary since the last load, by dimension. */
  private readonly absent = new Map<string, Set<string>>();

  /**
   * A load ended (committed or not): values absent before may be there now, except those
   * `holds` (the load's dictionaries) says are still not (false; undefined: it cannot tell).
   */
  loaded(holds?: (dimension: string, value: string) => boolean | undefined): void {
    // New sets: a lookup the load overlapped adds what it did not find to the old one, not these.
    for (const [dimension, absent] of this.absent) {
      const still = holds === undefined ? [] : [...absent].filter((value) => holds(dimension, value) === false);
      if (still.length === 0) this.absent.delete(dimension);
      else this.absent.set(dimension, new Set(still));
    }
  }

  /** Looks up (once) every value of `wanted` not cached yet; afterwards `codesOf` answers from the cache. */
  async load(connection: DuckDBConnection, wanted: ReadonlyMap<string, readonly string[]>): Promise<void> {
    for (const [dimension, values] of wanted) {
      let known = this.codes.get(dimension);
      if (!known || known.size > MAX_CACHED) this.codes.set(dimension, (known = new Map()));
      let absent = this.absent.get(dimension);
      if (!absent || absent.size > MAX_CACHED) this.absent.set(dimension, (absent = new Set()));
      const missing = values.filter((v) => !known!.has(v) && !absent!.has(v));
      if (missing.length === 0) continue;
      const reader = await connection.runAndReadAll(`SELECT value, code FROM ${dictionaryOf(dimension)} WHERE list_contains($1, value)`, [listValue(missing)], [LIST(VARCHAR)]);
      for (const [value, code] of reader.getRowsJS()) known.set(String(value), Number(code));
      // A load that ended meanwhile may have added what this lookup did not see: it cleared
      // `absent`, so this set is no longer the cache's and what is added here is dropped.
      for (const value of missing) if (!known.has(value)) absent.add(value);
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
