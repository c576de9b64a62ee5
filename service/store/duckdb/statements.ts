/**
 * Prepared statements kept per pooled connection, by SQL text. A report's SQL depends only on
 * its shape (dimensions, metrics, filters, which tables), never on its values, which are bound;
 * so the reports a server answers are a few texts, parsed once per connection and text, and run
 * in one call from JS where an unprepared text takes three (extract, prepare, run). DuckDB still
 * binds and plans a statement again at every run once values are bound (a statement prepared
 * without them has not bound all its parameters): ~1 ms of a month total's ~2 ms of DuckDB
 * (docs/benchmarks.md, "The read side, part three"); fixed-plans.ts runs the small reports'
 * statements without it until the next load. A connection runs one statement at a time
 * (connection.ts), so a cached statement is never bound by two callers at once.
 *
 * The result is read from DuckDB's materialized chunks synchronously (`getChunk`): node-api's
 * `runAndReadAll` fetches each chunk, and then the end, as one more task on libuv's pool, two
 * more round trips through another thread for a report's one-row answer, each a wait for a core
 * on a busy machine.
 */
import type { DuckDBConnection, DuckDBMaterializedResult, DuckDBPreparedStatement, DuckDBType, DuckDBValue } from "@duckdb/node-api";

/** Statements kept per connection; past it the least recently used is destroyed. */
export const MAX_PREPARED_PER_CONNECTION = 64;

const prepared = new WeakMap<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

/** Runs `sql` with bound `values` on `connection`, preparing it only the first time this connection sees the text; its rows. */
export async function runPrepared(connection: DuckDBConnection, sql: string, values: DuckDBValue[], types: DuckDBType[]): Promise<DuckDBValue[][]> {
  return rowsOf(await runPreparedResult(connection, sql, values, types));
}

/** A materialized result's rows. */
export function rowsOf(result: DuckDBMaterializedResult): DuckDBValue[][] {
  const rows: DuckDBValue[][] = [];
  for (let i = 0, n = result.chunkCount; i < n; i++) rows.push(...result.getChunk(i).getRows());
  return rows;
}

/** `runPrepared`, its result as DuckDB materialized it (for reading whole columns). */
export async function runPreparedResult(connection: DuckDBConnection, sql: string, values: DuckDBValue[], types: DuckDBType[]): Promise<DuckDBMaterializedResult> {
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
  return statement.run();
}
