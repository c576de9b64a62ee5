/**
 * Prepared statements kept per pooled connection, by SQL text. A report's SQL depends only on
 * its shape (dimensions, metrics, filters, which tables), never on its values, which are bound;
 * so the reports a server answers are a few texts, and DuckDB's parse, bind and plan (about a
 * millisecond here, docs/benchmarks.md) is paid once per connection and text, not per request.
 * A connection runs one statement at a time (connection.ts), so a cached statement is never
 * bound by two callers at once.
 */
import type { DuckDBConnection, DuckDBPreparedStatement, DuckDBResultReader, DuckDBType, DuckDBValue } from "@duckdb/node-api";

/** Statements kept per connection; past it the least recently used is destroyed. */
export const MAX_PREPARED_PER_CONNECTION = 64;

const prepared = new WeakMap<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

/** Runs `sql` with bound `values` on `connection`, preparing it only the first time this connection sees the text. */
export async function runPrepared(connection: DuckDBConnection, sql: string, values: DuckDBValue[], types: DuckDBType[]): Promise<DuckDBResultReader> {
  let statements = prepared.get(connection);
  if (statements === undefined) prepared.set(connection, (statements = new Map()));
  let statement = statements.get(sql);
  if (statement === undefined) {
    statement = await connection.prepare(sql);
    if (statements.size >= MAX_PREPARED_PER_CONNECTION) {
      const [oldest, evicted] = statements.entries().next().value!;
      statements.delete(oldest);
      evicted.destroySync();
    }
  } else {
    statements.delete(sql);
  }
  // Re-inserted: the Map's order is the order of last use.
  statements.set(sql, statement);
  statement.bind(values, types);
  return statement.runAndReadAll();
}
