/**
 * Report accounts in ClickHouse: a ReplacingMergeTree keyed by userid, read with FINAL. A
 * revocation inserts the row again with `revoked_at_ms` set and a higher `version`. The
 * credential is kept only as its SHA-256 (hex) and compared in constant time, as in the DuckDB
 * store (service/store/duckdb/accounts.ts, whose checks this file repeats).
 *
 * Every change (a creation, a revocation, a new auction key) then appends a row to
 * `account_changes`, a plain MergeTree whose rows are never merged away: its count moves with
 * every change, and the other nodes poll it to drop what they cached (accountChangeCount).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { decoyHash, MAX_USERID_LENGTH, normaliseAccount, sha256 } from "../checks.js";
import type { Account, AuctionKeyRecord, NewAccount, Side } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";

const COLUMNS = "userid, side, bidder_id, publisher_ids, legacy, placement_dimensions, token_sha256, created_at_ms, revoked_at_ms, version";

interface AccountRow {
  userid: string;
  side: string;
  bidder_id: string | null;
  publisher_ids: string[];
  legacy: number;
  placement_dimensions: number;
  token_sha256: string;
  created_at_ms: string | number;
  revoked_at_ms: string | number;
  version: string | number;
}

function toAccount(row: AccountRow): Account {
  const account: Account = {
    userid: row.userid,
    side: row.side as Side,
    legacy: Number(row.legacy) === 1,
    placement_dimensions: Number(row.placement_dimensions) === 1,
    created_at: new Date(Number(row.created_at_ms)).toISOString(),
    revoked: Number(row.revoked_at_ms) > 0,
  };
  if (row.side === "demand" && row.bidder_id !== null) account.bidder_id = row.bidder_id;
  if (row.side === "supply") account.publisher_ids = row.publisher_ids;
  return account;
}

async function findAccount(connection: ClickHouseConnection, userid: string): Promise<AccountRow | undefined> {
  const values = connection.values();
  const rows = await connection.rows<AccountRow>(`SELECT ${COLUMNS} FROM ${connection.table("accounts")} FINAL WHERE userid = ${values.add(userid, "String")}`, values);
  return rows[0];
}

/** What an account change was, as `account_changes` records it. */
type AccountChange = "created" | "revoked" | "auction-key";

/** Appends a change to the log the nodes poll, after the change itself: a node that sees the row reads the change. */
async function logChange(connection: ClickHouseConnection, userid: string, change: AccountChange): Promise<void> {
  await connection.insert("account_changes", [{ changed_at_ms: Date.now(), userid, change }]);
}

/**
 * How many account changes were ever logged: it moves with every change (the log's rows are
 * never merged away), so a node that polls it knows when to drop what it cached.
 */
export async function accountChangeCount(connection: ClickHouseConnection): Promise<number> {
  const [row] = await connection.rows<{ changes: string | number }>(`SELECT count() AS changes FROM ${connection.table("account_changes")}`);
  return Number(row?.changes ?? 0);
}

/** Creates an account; returns its userid and the credential, which is not stored. */
export async function createAccount(connection: ClickHouseConnection, a: NewAccount): Promise<{ userid: string; authorization: string }> {
  const account = normaliseAccount(a);
  const authorization = randomBytes(32).toString("base64url");
  // 48 random bits make a clash unlikely; without a primary key to catch one, look first.
  let userid = `u_${randomBytes(6).toString("hex")}`;
  for (let attempt = 0; (await findAccount(connection, userid)) !== undefined; attempt++) {
    if (attempt >= 3) throw new Error("could not draw an unused userid");
    userid = `u_${randomBytes(6).toString("hex")}`;
  }
  const now = Date.now();
  await connection.insert("accounts", [
    {
      userid,
      side: account.side,
      bidder_id: account.bidder_id,
      publisher_ids: account.publisher_ids ?? [],
      legacy: account.legacy ? 1 : 0,
      placement_dimensions: account.placement_dimensions ? 1 : 0,
      token_sha256: sha256(authorization).toString("hex"),
      created_at_ms: now,
      revoked_at_ms: 0,
      version: now,
    },
  ]);
  await logChange(connection, userid, "created");
  return { userid, authorization };
}

/** Every account, oldest first; never the credential or its hash. */
export async function listAccounts(connection: ClickHouseConnection): Promise<Account[]> {
  const rows = await connection.rows<AccountRow>(`SELECT ${COLUMNS} FROM ${connection.table("accounts")} FINAL ORDER BY created_at_ms, userid`);
  return rows.map(toAccount);
}

/** Marks an account revoked (keeping the first revocation time); false when the userid is unknown. */
export async function revokeAccount(connection: ClickHouseConnection, userid: string): Promise<boolean> {
  if (typeof userid !== "string" || userid.length === 0 || userid.length > MAX_USERID_LENGTH) return false;
  const row = await findAccount(connection, userid);
  if (!row) return false;
  if (Number(row.revoked_at_ms) > 0) return true;
  const now = Date.now();
  await connection.insert("accounts", [{ ...row, revoked_at_ms: now, version: Math.max(now, Number(row.version) + 1) }]);
  await logChange(connection, userid, "revoked");
  return true;
}

/**
 * The account when `authorization` is its credential and it is not revoked, else null. As in
 * the DuckDB store, one aggregate (one row of the same shape whether or not the userid exists)
 * and the constant-time comparison run for every call; only a right credential reads the row.
 */
export async function verifyCredentials(connection: ClickHouseConnection, userid: string, authorization: string): Promise<Account | null> {
  if (typeof userid !== "string" || typeof authorization !== "string") return null;
  const given = sha256(authorization);
  const name = userid.length <= MAX_USERID_LENGTH ? userid : "";
  const values = connection.values();
  const [found] = await connection.rows<{ stored: string; revoked: string | number; rows: string | number }>(
    `SELECT argMax(token_sha256, version) AS stored, argMax(revoked_at_ms, version) AS revoked, count() AS rows
     FROM ${connection.table("accounts")} WHERE userid = ${values.add(name, "String")}`,
    values,
  );
  const stored = found && Number(found.rows) > 0 && /^[0-9a-f]{64}$/.test(found.stored) ? Buffer.from(found.stored, "hex") : decoyHash;
  const match = stored.length === given.length && timingSafeEqual(given, stored);
  if (!match || Number(found.revoked) > 0) return null;
  const row = await findAccount(connection, name);
  return row && Number(row.revoked_at_ms) === 0 ? toAccount(row) : null;
}

/** A new auction key for a live supply account (replacing its previous one); null when there is none. */
export async function issueAuctionKey(connection: ClickHouseConnection, userid: string): Promise<string | null> {
  if (typeof userid !== "string" || userid.length === 0 || userid.length > MAX_USERID_LENGTH) return null;
  const row = await findAccount(connection, userid);
  if (row?.side !== "supply" || Number(row.revoked_at_ms) > 0) return null;
  const key = randomBytes(32).toString("base64url");
  await connection.insert("auction_keys", [{ userid, key_sha256: sha256(key).toString("hex"), version: Date.now() }]);
  await logChange(connection, userid, "auction-key");
  return key;
}

/** The auction keys of live supply accounts, hashes only. */
export async function auctionKeys(connection: ClickHouseConnection): Promise<AuctionKeyRecord[]> {
  const rows = await connection.rows<{ userid: string; publisher_ids: string[]; key_sha256: string }>(
    `SELECT k.userid AS userid, a.publisher_ids AS publisher_ids, k.key_sha256 AS key_sha256
     FROM ${connection.table("auction_keys")} AS k FINAL
     INNER JOIN (SELECT userid, publisher_ids FROM ${connection.table("accounts")} FINAL WHERE side = 'supply' AND revoked_at_ms = 0) AS a ON a.userid = k.userid
     ORDER BY userid`,
  );
  return rows.map((row) => ({ userid: row.userid, publisher_ids: row.publisher_ids, key_sha256: row.key_sha256 }));
}
