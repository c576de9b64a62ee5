/**
 * Report accounts: a userid and a random credential, kept only as a hash and compared in
 * constant time. The credential is shown once, by `createAccount`. A supply account may also
 * hold an auction key (POST /openrtb2/auction), kept the same way and shown once by
 * `issueAuctionKey`.
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
 * The stored hash of a userid's credential, or the decoy when there is none: an aggregate, so
 * exactly one row of the same shape whether or not the userid exists (the unknown userid does
 * the same work as a wrong credential).
 */
const SELECT_HASH = "SELECT coalesce(max(token_sha256), $2) AS stored, count(*) AS found, coalesce(bool_or(revoked_at IS NOT NULL), false) AS revoked FROM accounts WHERE userid = $1";

/**
 * The account when `authorization` is its credential and it is not revoked, else null. The
 * same query and the same constant-time comparison run whether or not the userid exists
 * (against a decoy when it does not); only a right credential reads the account's row.
 */
export async function verifyCredentials(connection: DuckDBConnection, userid: string, authorization: string): Promise<Account | null> {
  if (typeof userid !== "string" || typeof authorization !== "string") return null;
  const given = sha256(authorization);
  // An over-long userid is looked up as the empty one: none exists, the work is the same.
  const name = userid.length <= MAX_USERID_LENGTH ? userid : "";
  const reader = await connection.runAndReadAll(SELECT_HASH, [name, new DuckDBBlobValue(decoyHash)], [VARCHAR, BLOB]);
  const { stored, found, revoked } = reader.getRowObjectsJS()[0] as { stored: Uint8Array; found: bigint; revoked: boolean };
  const hash = Buffer.from(stored);
  const match = hash.length === given.length && timingSafeEqual(given, hash);
  if (!match || found === 0n || revoked) return null;
  const row = (await connection.runAndReadAll(`${SELECT_ACCOUNT} FROM accounts WHERE userid = $1`, [name], [VARCHAR])).getRowObjectsJS()[0];
  return row ? toAccount(row) : null;
}

/** A new auction key for a live supply account (replacing its previous one); null when there is none. */
export async function issueAuctionKey(connection: DuckDBConnection, userid: string): Promise<string | null> {
  if (typeof userid !== "string" || userid.length === 0 || userid.length > MAX_USERID_LENGTH) return null;
  const key = randomBytes(32).toString("base64url");
  const result = await connection.run(
    `INSERT OR REPLACE INTO auction_keys
       SELECT userid, $2, $3 FROM accounts WHERE userid = $1 AND side = 'supply' AND revoked_at IS NULL`,
    [userid, new DuckDBBlobValue(sha256(key)), timestampValue(BigInt(Date.now()) * 1000n)],
    [VARCHAR, BLOB, TIMESTAMP],
  );
  return result.rowsChanged > 0 ? key : null;
}

/**
 * The auction keys of live supply accounts, hashes only, as one JSON text (an array of
 * AuctionKeyRecord) that DuckDB builds: node-api's conversion of the rows to objects held the event
 * loop 7.7–14 ms per reload with 1,000 accounts, 34 ms with 5,000 (docs/benchmarks.md, "The
 * exchange's stalls"), and the exchange reloads every few seconds. One text is also compared whole
 * with the last one, so an unchanged table is not parsed again (store.ts).
 */
export async function auctionKeysJson(connection: DuckDBConnection): Promise<string> {
  const reader = await connection.runAndReadAll(
    `SELECT coalesce(to_json(list({userid: a.userid, publisher_ids: a.publisher_ids, key_sha256: lower(hex(k.key_sha256))} ORDER BY a.userid)), '[]')::VARCHAR
     FROM auction_keys k JOIN accounts a USING (userid)
     WHERE a.side = 'supply' AND a.revoked_at IS NULL`,
  );
  return String(reader.getRowsJS()[0][0]);
}
