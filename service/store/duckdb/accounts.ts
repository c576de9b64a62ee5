/**
 * Report accounts: a userid and a random credential, kept only as a hash and compared in
 * constant time. The credential is shown once, by `createAccount`.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { BLOB, BOOLEAN, LIST, TIMESTAMP, VARCHAR, DuckDBBlobValue, listValue, timestampValue, type DuckDBConnection } from "@duckdb/node-api";
import { decoyHash, MAX_USERID_LENGTH, normaliseAccount, sha256 } from "../checks.js";
import type { Account, NewAccount, Side } from "../store.js";




const SELECT_ACCOUNT = `SELECT userid, side, bidder_id, publisher_ids, legacy, placement_dimensions,
  strftime(created_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS created_at, revoked_at IS NOT NULL AS revoked`;

function toAccount(row: Record<string, unknown>): Account {
  const account: Account = {
    userid: row.userid as string,
    side: row.side as Side,
    legacy: row.legacy as boolean,
    placement_dimensions: row.placement_dimensions as boolean,
    created_at: row.created_at as string,
    revoked: row.revoked as boolean,
  };
  if (row.bidder_id !== null) account.bidder_id = row.bidder_id as string;
  if (row.publisher_ids !== null) account.publisher_ids = row.publisher_ids as string[];
  return account;
}

const isConstraintError = (error: unknown) => /constraint/i.test((error as Error).message);

/** Creates an account; returns its userid and the credential, which is not stored. */
export async function createAccount(connection: DuckDBConnection, a: NewAccount): Promise<{ userid: string; authorization: string }> {
  const account = normaliseAccount(a);
  const authorization = randomBytes(32).toString("base64url");
  const hash = new DuckDBBlobValue(sha256(authorization));
  // 48 random bits make a clash unlikely; the primary key catches one, and we draw again.
  for (let attempt = 0; ; attempt++) {
    const userid = `u_${randomBytes(6).toString("hex")}`;
    try {
      await connection.run(
        "INSERT INTO accounts VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)",
        [
          userid,
          account.side,
          account.bidder_id,
          account.publisher_ids === null ? null : listValue(account.publisher_ids),
          account.legacy,
          account.placement_dimensions,
          hash,
          timestampValue(BigInt(Date.now()) * 1000n),
        ],
        [VARCHAR, VARCHAR, VARCHAR, LIST(VARCHAR), BOOLEAN, BOOLEAN, BLOB, TIMESTAMP],
      );
      return { userid, authorization };
    } catch (error) {
      if (attempt >= 3 || !isConstraintError(error)) throw error;
    }
  }
}

/** Every account, oldest first; never the credential or its hash. */
export async function listAccounts(connection: DuckDBConnection): Promise<Account[]> {
  const reader = await connection.runAndReadAll(`${SELECT_ACCOUNT} FROM accounts ORDER BY created_at, userid`);
  return reader.getRowObjectsJS().map((row) => toAccount(row));
}

/** Marks an account revoked (keeping the first revocation time); false when the userid is unknown. */
export async function revokeAccount(connection: DuckDBConnection, userid: string): Promise<boolean> {
  const result = await connection.run(
    "UPDATE accounts SET revoked_at = COALESCE(revoked_at, $2) WHERE userid = $1",
    [userid, timestampValue(BigInt(Date.now()) * 1000n)],
    [VARCHAR, TIMESTAMP],
  );
  return result.rowsChanged > 0;
}

/**
 * The account when `authorization` is its credential and it is not revoked, else null. The
 * hash comparison runs whether or not the userid exists, against a decoy when it does not.
 */
export async function verifyCredentials(connection: DuckDBConnection, userid: string, authorization: string): Promise<Account | null> {
  if (typeof userid !== "string" || typeof authorization !== "string") return null;
  const given = sha256(authorization);
  let row: Record<string, unknown> | undefined;
  if (userid.length > 0 && userid.length <= MAX_USERID_LENGTH) {
    const reader = await connection.runAndReadAll(`${SELECT_ACCOUNT}, token_sha256 FROM accounts WHERE userid = $1`, [userid], [VARCHAR]);
    row = reader.getRowObjectsJS()[0];
  }
  const stored = row ? Buffer.from(row.token_sha256 as Uint8Array) : decoyHash;
  const match = stored.length === given.length && timingSafeEqual(given, stored);
  if (!match || !row || row.revoked) return null;
  return toAccount(row);
}
