// An in-memory DuckDB for a test file that asks DuckDB itself what it writes (json-*.test.ts).
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { afterAll, beforeAll } from "vitest";

/** Opens the database before the file's tests and closes it after them; call the result for the connection. */
export function useMemoryDuckdb(): () => DuckDBConnection {
  let instance: DuckDBInstance | undefined;
  let connection: DuckDBConnection | undefined;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(":memory:");
    connection = await instance.connect();
  });
  afterAll(() => {
    connection?.closeSync();
    instance?.closeSync();
  });
  return () => {
    if (!connection) throw new Error("the in-memory DuckDB is open only inside the file's tests");
    return connection;
  };
}
