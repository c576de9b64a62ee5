/**
 * Checks both store engines apply the same way: new accounts, credential hashing, and the
 * parts of a report query (times, filter values). Errors are StoreError values with stable codes.
 */
import { createHash, randomBytes } from "node:crypto";
import { StoreError } from "./errors.js";
import { MAX_ID_LENGTH, withinIdLength } from "./fact.js";
import type { NewAccount, Side } from "./store.js";

/** Longest userid looked up; ours are 14 characters, anything much longer is not one. */
export const MAX_USERID_LENGTH = 64;

// SHA-256 without salt or stretching is enough here: the credential is 256 random bits, so
// there is nothing to guess from its hash; slow hashes exist for low-entropy passwords.
export const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/** Compared against when the userid is unknown, so both paths do the same work. */
export const decoyHash = sha256(randomBytes(32).toString("base64url"));

function invalidAccount(message: string): never {
  throw new StoreError("ADX_ERR_STORE_ACCOUNT_INVALID", message);
}

function checkId(name: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || !withinIdLength(value)) invalidAccount(`${name} must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
  return value;
}

export interface NormalisedAccount {
  side: Side;
  bidder_id: string | null;
  publisher_ids: string[] | null;
  legacy: boolean;
  placement_dimensions: boolean;
}

/** Checks a new account: demand has exactly a bidder_id; supply one or more publisher_ids and may carry the flags. */
export function normaliseAccount(a: NewAccount): NormalisedAccount {
  if (a.side === "demand") {
    if (a.publisher_ids !== undefined && a.publisher_ids.length > 0) invalidAccount("a demand account has a bidder_id, not publisher_ids");
    if (a.legacy || a.placement_dimensions) invalidAccount("legacy and placement_dimensions apply to supply accounts only");
    return { side: "demand", bidder_id: checkId("bidder_id", a.bidder_id), publisher_ids: null, legacy: false, placement_dimensions: false };
  }
  if (a.side === "supply") {
    if (a.bidder_id !== undefined) invalidAccount("a supply account has publisher_ids, not a bidder_id");
    if (!Array.isArray(a.publisher_ids) || a.publisher_ids.length === 0) invalidAccount("a supply account needs at least one publisher_id");
    const publisherIds = [...new Set(a.publisher_ids.map((id) => checkId("publisher_id", id)))];
    return { side: "supply", bidder_id: null, publisher_ids: publisherIds, legacy: a.legacy === true, placement_dimensions: a.placement_dimensions === true };
  }
  invalidAccount(`side must be "demand" or "supply"`);
}

/** A report query the store cannot run (the routes validate first; this guards direct callers). */
export function invalidQuery(message: string): never {
  throw new StoreError("ADX_ERR_STORE_QUERY_INVALID", message);
}

const reportTimePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** A report time as UTC milliseconds; throws when it is not a real `YYYY-MM-DDThh:mm:ss`. */
export function reportTimeMillis(name: string, text: unknown): number {
  const m = typeof text === "string" ? reportTimePattern.exec(text) : null;
  if (!m) invalidQuery(`${name} must be YYYY-MM-DDThh:mm:ss`);
  const millis = Date.parse(`${text}Z`);
  if (!Number.isFinite(millis) || new Date(millis).toISOString().slice(0, 19) !== text) invalidQuery(`${name} is not a real time`);
  return millis;
}

/** Integer code filter values, de-duplicated. */
export function checkIntegers(name: string, values: unknown[]): number[] {
  for (const v of values) if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 2_147_483_647) invalidQuery(`${name} holds a value that is not an integer code`);
  return [...new Set(values as number[])];
}

/** String filter values, de-duplicated. */
export function checkStrings(name: string, values: unknown[]): string[] {
  for (const v of values) if (typeof v !== "string") invalidQuery(`${name} holds a value that is not a string`);
  return [...new Set(values as string[])];
}
