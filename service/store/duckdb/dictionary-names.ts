/**
 * Dictionary values by code, as report rows written in JS need them (report-rows.ts): each
 * value's JSON text, made by DuckDB's own writer (`to_json`, the escaping `json_object` applies),
 * and its UTF-8 bytes, whose order is DuckDB's order of the strings. Cached per store: a committed
 * code never changes meaning (dictionary rows are only ever added), so the cache never goes stale,
 * and a server answering the same reports again looks nothing up.
 */
import { INTEGER, LIST, listValue, type DuckDBBlobValue, type DuckDBConnection } from "@duckdb/node-api";
import { dictionaryOf } from "./layout.js";
import { runPrepared } from "./statements.js";

/** A dictionary value as a report row writes it. */
export interface DictionaryName {
  /** Its JSON string, quotes included. */
  json: Uint8Array;
  /** Its UTF-8 bytes: strings sort by these. */
  bytes: Uint8Array;
}

/** Past this many cached names per dictionary the cache starts over, bounding memory. */
const MAX_CACHED = 1_000_000;

/** The names of dictionary codes, cached per store. */
export class DictionaryNames {
  private readonly names = new Map<string, Map<number, DictionaryName>>();

  /**
   * The names of `codes` (a column of a report's rows) of `dimension`'s dictionary, looking up
   * those not cached; undefined when a code has no value (no row of a report joins it).
   */
  async namesOf(connection: DuckDBConnection, dimension: string, codes: Int32Array): Promise<Map<number, DictionaryName> | undefined> {
    let known = this.names.get(dimension);
    if (known === undefined) this.names.set(dimension, (known = new Map()));
    const missing = new Set<number>();
    for (let i = 0; i < codes.length; i++) if (!known.has(codes[i])) missing.add(codes[i]);
    if (missing.size === 0) return known;
    if (known.size + missing.size > MAX_CACHED) {
      known = new Map();
      this.names.set(dimension, known);
      for (let i = 0; i < codes.length; i++) missing.add(codes[i]);
    }
    const sql = `SELECT code, encode(CAST(to_json(value) AS VARCHAR)), encode(value) FROM ${dictionaryOf(dimension)} WHERE code IN (SELECT unnest($1))`;
    const rows = await runPrepared(connection, sql, [listValue([...missing])], [LIST(INTEGER)]);
    for (const [code, json, bytes] of rows) known.set(Number(code), { json: (json as DuckDBBlobValue).bytes, bytes: (bytes as DuckDBBlobValue).bytes });
    for (const code of missing) if (!known.has(code)) return undefined;
    return known;
  }
}
