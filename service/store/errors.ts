/**
 * Errors of the report store are values with stable codes (a retired code is never reused):
 * the routes map them to report status codes, the commands to exit codes.
 */

/** Every code a store error can carry. */
export const storeErrorCodes = {
  /** A fact is malformed: wrong type, missing field, bad hour, negative count, unknown side. */
  ADX_ERR_STORE_FACT_INVALID: "a fact is invalid",
  /** A report query names something the side does not have, or a value out of range. */
  ADX_ERR_STORE_QUERY_INVALID: "a report query is invalid",
  /** An account to create is incomplete or contradictory. */
  ADX_ERR_STORE_ACCOUNT_INVALID: "an account is invalid",
  /** The store was closed. */
  ADX_ERR_STORE_CLOSED: "the store is closed",
  /** The database was written by a newer adxkit (a schema version this one does not know). */
  ADX_ERR_STORE_SCHEMA_NEWER: "the database schema is newer than this adxkit",
  /** Another process holds the database file (DuckDB has one writing process per file). */
  ADX_ERR_STORE_LOCKED: "the database is locked by another process",
} as const;

export type StoreErrorCode = keyof typeof storeErrorCodes;

/** An error of the report store, with a stable `code`. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string) {
    super(message);
    this.name = "StoreError";
    this.code = code;
  }
}

/** A malformed fact: `line` is its 1-based line in a file, or its position in an ingested sequence. */
export class FactError extends StoreError {
  readonly line: number;
  readonly reason: string;
  constructor(line: number, reason: string) {
    super("ADX_ERR_STORE_FACT_INVALID", `line ${line}: ${reason}`);
    this.name = "FactError";
    this.line = line;
    this.reason = reason;
  }
}
