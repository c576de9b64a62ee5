/**
 * What the exchange needs to recover from a crash (store.ts IngestOptions, RecoveryState): the
 * spool checkpoint and the billing tokens counted, written inside the transaction of the facts
 * they go with, so that facts, checkpoint and tokens commit together or not at all.
 */
import { BIGINT, TIMESTAMP, VARCHAR, timestampValue, type DuckDBConnection } from "@duckdb/node-api";
import type { IngestOptions, RecoveryState } from "../store.js";
import { CHUNK_ROWS, insertRows, type RowChunk } from "./row-scan.js";

/** Expired tokens are deleted at most this often (a full scan of the table): see `sweepDue`. */
export const SWEEP_EVERY_MS = 60_000;

/**
 * Writes the checkpoint and tokens of a load, and with `sweep` deletes the expired tokens; runs
 * inside the load's transaction.
 */
export async function writeRecovery(connection: DuckDBConnection, options: IngestOptions, sweep: boolean, now = Date.now()): Promise<void> {
  if (sweep) {
    await connection.run("DELETE FROM billing_tokens WHERE expires_ms <= $1", [BigInt(now)], [BIGINT]);
  }
  const tokens = options.billingTokens ?? [];
  const chunks: RowChunk[] = [];
  for (let start = 0; start < tokens.length; start += CHUNK_ROWS) {
    const part = tokens.slice(start, start + CHUNK_ROWS);
    const expires = BigInt64Array.from(part, (token) => BigInt(Math.trunc(token.expiresAt)));
    chunks.push({ rows: part.length, columns: [part.map((token) => token.id), new Uint8Array(expires.buffer)] });
  }
  // A query on libuv's pool (row-scan.ts), not an Appender's closeSync on the event loop.
  await insertRows(connection, "billing_tokens", { types: [VARCHAR, BIGINT], chunks });
  if (options.checkpoint) {
    await connection.run(
      "INSERT OR REPLACE INTO spool_checkpoints VALUES ($1, $2, $3)",
      [options.checkpoint.name, options.checkpoint.position, timestampValue(BigInt(now) * 1000n)],
      [VARCHAR, VARCHAR, TIMESTAMP],
    );
  }
}

/** The checkpoint of spool `name`, and the tokens counted that expire after `now`. */
export async function readRecoveryState(connection: DuckDBConnection, name: string, now: number): Promise<RecoveryState> {
  const checkpoint = await connection.runAndReadAll("SELECT position FROM spool_checkpoints WHERE name = $1", [name], [VARCHAR]);
  const tokens = await connection.runAndReadAll("SELECT token_id, max(expires_ms) FROM billing_tokens WHERE expires_ms > $1 GROUP BY token_id", [BigInt(now)], [BIGINT]);
  const position = checkpoint.getRowsJS()[0]?.[0];
  return {
    position: typeof position === "string" ? position : undefined,
    billingTokens: tokens.getRowsJS().map(([id, expires]) => ({ id: String(id), expiresAt: Number(expires) })),
  };
}
