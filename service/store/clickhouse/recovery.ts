/**
 * The exchange's crash-recovery state on ClickHouse (store.ts IngestOptions, RecoveryState).
 * ClickHouse has no transactions: the tokens and the checkpoint are inserted right after the
 * facts, so a crash between the two makes the facts of that one flush count again after the
 * restart (at least once; DuckDB, which commits them together, counts exactly once). Billed
 * impressions do not depend on it: the exchange gives them to this store apart (billed.ts), as
 * rows that collapse per token; `billing_tokens` holds only what older versions counted.
 */
import type { IngestOptions, RecoveryState } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";

/** Expired tokens are deleted (a mutation) at most this often. */
export const SWEEP_EVERY_MS = 3_600_000;

/** An epoch-millisecond time as an integer literal; anything else is refused (never reaches SQL). */
function millisecondsLiteral(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`not a time in milliseconds: ${String(ms)}`);
  return String(ms);
}

/** Writes the tokens and the checkpoint of a load that has just been inserted. */
export async function writeRecovery(connection: ClickHouseConnection, options: IngestOptions, sweep: boolean, now = Date.now()): Promise<void> {
  if (sweep) await connection.command(`ALTER TABLE ${connection.table("billing_tokens")} DELETE WHERE expires_ms <= ${millisecondsLiteral(Math.trunc(now))}`);
  const tokens = options.billingTokens ?? [];
  await connection.insert(
    "billing_tokens",
    tokens.map((token) => ({ token_id: token.id, expires_ms: Math.trunc(token.expiresAt) })),
  );
  if (options.checkpoint) {
    await connection.insert("spool_checkpoints", [{ name: options.checkpoint.name, position: options.checkpoint.position, version: now }]);
  }
}

/** The checkpoint of spool `name`, and the tokens counted that expire after `now`. */
export async function readRecoveryState(connection: ClickHouseConnection, name: string, now: number): Promise<RecoveryState> {
  const values = connection.values();
  const checkpoint = await connection.rows<{ position: string }>(
    `SELECT position FROM ${connection.table("spool_checkpoints")} FINAL WHERE name = ${values.add(name, "String")}`,
    values,
  );
  // The alias must not be the column's name: ClickHouse would read it in WHERE too.
  const tokens = await connection.rows<{ token_id: string; expires: string | number }>(
    `SELECT token_id, max(expires_ms) AS expires FROM ${connection.table("billing_tokens")} WHERE expires_ms > ${millisecondsLiteral(Math.trunc(now))} GROUP BY token_id`,
  );
  return {
    position: checkpoint[0]?.position,
    billingTokens: tokens.map((row) => ({ id: row.token_id, expiresAt: Number(row.expires) })),
  };
}
