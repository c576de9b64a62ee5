/**
 * Dictionary codes → names, for printing report rows. A committed code never changes meaning
 * (dictionary rows are only ever added), so a cached entry never goes stale; unknown codes are
 * fetched on demand.
 */
import { INTEGER, LIST, listValue, type DuckDBConnection } from "@duckdb/node-api";
import type { DictionaryTable } from "./dictionary.js";

/** Past this many cached names per dictionary the cache starts over, bounding memory. */
const MAX_CACHED = 1_000_000;

/** The names of dictionary codes, cached per store. */
export class DictionaryNames {
  private readonly names = new Map<DictionaryTable, Map<number, string>>();

  /** The names of `codes` in `table` (codes a report just returned, so they are committed). */
  async lookup(connection: DuckDBConnection, table: DictionaryTable, codes: Iterable<number>): Promise<Map<number, string>> {
    let known = this.names.get(table);
    if (!known || known.size > MAX_CACHED) {
      known = new Map();
      this.names.set(table, known);
    }
    const missing = new Set<number>();
    for (const code of codes) if (!known.has(code)) missing.add(code);
    if (missing.size > 0) {
      const reader = await connection.runAndReadAll(`SELECT code, value FROM ${table} WHERE list_contains($1, code)`, [listValue([...missing])], [LIST(INTEGER)]);
      for (const [code, value] of reader.getRowsJS()) known.set(Number(code), value as string);
    }
    return known;
  }
}
