/**
 * Rows this thread prepared, inserted by a query that runs on libuv's pool: `INSERT INTO <table>
 * SELECT * FROM adxkit_rows(<id>)`, where `adxkit_rows` is a table function whose scan hands
 * DuckDB the prepared chunks (node-api runs its callbacks on this thread, each a copy of one
 * chunk's bytes). An Appender's `closeSync` does its insert on the event loop instead: 0.6–1 ms a
 * table, three tables a flush of the exchange, every second (docs/benchmarks.md, "The exchange's
 * stalls beside heavy reports").
 */
import duckdb from "@duckdb/node-bindings";
import { DuckDBTableFunction, INTEGER, type DuckDBConnection, type DuckDBType } from "@duckdb/node-api";

/** DuckDB's standard vector size: the most rows a chunk holds. */
export const CHUNK_ROWS = 2048;

/** At most CHUNK_ROWS rows; each column its values' bytes as DuckDB holds them (fixed width), or strings. */
export interface RowChunk {
  rows: number;
  columns: (Uint8Array | readonly string[])[];
}

/** Rows for a table: its columns' types in table order, and the chunks. */
export interface Rows {
  types: readonly DuckDBType[];
  chunks: RowChunk[];
}

const FUNCTION = "adxkit_rows";
/** Rows waiting for their insert's scan, by the id the query names. */
const waiting = new Map<number, Rows>();
let nextId = 1;
const registered = new WeakSet<DuckDBConnection>();

function rowScan(): DuckDBTableFunction {
  return DuckDBTableFunction.create({
    name: FUNCTION,
    parameterTypes: [INTEGER],
    bindFunction: (info) => {
      const id = Number(info.getParameter(0));
      const rows = waiting.get(id);
      if (rows === undefined) return info.setError(`${FUNCTION}: no rows ${id}`);
      rows.types.forEach((type, i) => info.addResultColumn(`c${i}`, type));
      info.setBindData({ rows });
    },
    initFunction: (info) => info.setInitData({ next: 0 }),
    mainFunction: (info, output) => {
      const { rows } = info.bindData as { rows: Rows };
      const state = info.initData as { next: number };
      const chunk = rows.chunks[state.next++];
      if (chunk === undefined) {
        output.rowCount = 0;
        return;
      }
      output.rowCount = chunk.rows;
      for (let c = 0; c < chunk.columns.length; c++) {
        const vector = duckdb.data_chunk_get_vector(output.chunk, c);
        const column = chunk.columns[c];
        if (column instanceof Uint8Array) duckdb.copy_data_to_vector(vector, 0, column.buffer as ArrayBuffer, column.byteOffset, column.byteLength);
        else for (let row = 0; row < chunk.rows; row++) duckdb.vector_assign_string_element(vector, row, column[row]);
      }
    },
  });
}

/**
 * Makes `insertRows` work on `connection`. Called outside a transaction: the function is
 * registered in the catalog, and a rolled-back transaction would take it away.
 */
export function registerRowScan(connection: DuckDBConnection): void {
  if (registered.has(connection)) return;
  connection.registerTableFunction(rowScan());
  registered.add(connection);
}

/**
 * Inserts `rows` into `table` (inside the connection's transaction, if one is open); the rows are not kept.
 * The query waits on this thread for each chunk (the scan's callbacks run here): no synchronous
 * DuckDB call on this thread may wait for the inserting connection meanwhile, or neither moves.
 */
export async function insertRows(connection: DuckDBConnection, table: string, rows: Rows): Promise<void> {
  if (rows.chunks.length === 0) return;
  if (!registered.has(connection)) throw new Error(`insertRows into ${table}: registerRowScan was not called for this connection`);
  const id = nextId++;
  waiting.set(id, rows);
  try {
    await connection.run(`INSERT INTO ${table} SELECT * FROM ${FUNCTION}(${id})`);
  } finally {
    waiting.delete(id);
  }
}
