/**
 * Verified report credentials kept in memory, so a report request that presents the same right
 * credential again is answered without a database round trip (two statements on DuckDB, two
 * HTTP queries on ClickHouse; measured in docs/benchmarks.md, "Reports through HTTP").
 *
 * Only a right credential is ever answered from here: anything else (an unknown userid, a wrong
 * credential, an expired entry) goes to the store's own constant-time lookup as before, so a
 * wrong guess costs the same whether or not the userid is cached. A revocation through this
 * store forgets the userid at once; one through another process sharing the database (several
 * ClickHouse nodes) clears the whole cache at this node's next poll of the account changes
 * (`clear`, every accounts-poll-ms), and at the latest when the entry's `ttlMs` runs out.
 */
import { auctionRules } from "@adxkit/bindings";
import { timingSafeEqual } from "node:crypto";
import { sha256 } from "./checks.js";
import type { Account } from "./store.js";

/**
 * The backstop of a revocation made by another process sharing the database (another ClickHouse
 * node), should this node's poll of the account changes fail: the lifetime of a cached credential,
 * and the full reload period of the exchange's auction keys (service/accounts/auction-keys.ts).
 * The spec's accounts-backstop-ms (x-adxkit-auction revocation).
 */
export const ACCOUNTS_BACKSTOP_MS = auctionRules.accountsBackstopMs;

export interface CredentialsCacheOptions {
  /** How long a verified credential is trusted without asking the database again (Infinity: until revoked here). */
  ttlMs: number;
  /** Most userids kept; past it the oldest entry goes. */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  hash: Buffer;
  account: Account;
  expires: number;
}

/** Default bound on cached userids: a few MB at most. */
export const DEFAULT_MAX_CACHED_CREDENTIALS = 10_000;

/** Right credentials, by userid, with the account they open. */
export class CredentialsCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every `forget`: a lookup that started before a revocation never caches its answer. */
  private generation = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: CredentialsCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_CACHED_CREDENTIALS;
    this.now = options.now ?? Date.now;
  }

  /**
   * The account of a right credential: from memory when this credential was verified before,
   * else from `lookup` (the store's own check), remembered when it opens an account.
   */
  async verify(userid: string, authorization: string, lookup: () => Promise<Account | null>): Promise<Account | null> {
    if (typeof userid === "string" && typeof authorization === "string") {
      const entry = this.entries.get(userid);
      if (entry !== undefined && entry.expires > this.now() && timingSafeEqual(sha256(authorization), entry.hash)) return entry.account;
    }
    const generation = this.generation;
    const account = await lookup();
    if (account !== null && generation === this.generation) this.remember(userid, authorization, account);
    return account;
  }

  /** Drops a userid (its account was revoked): its credential is checked against the database again. */
  forget(userid: string): void {
    this.generation++;
    this.entries.delete(userid);
  }

  /** Drops every userid (accounts changed elsewhere): each credential is checked against the database again. */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  private remember(userid: string, authorization: string, account: Account): void {
    this.entries.delete(userid);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    const frozen = Object.freeze({ ...account, ...(account.publisher_ids ? { publisher_ids: Object.freeze([...account.publisher_ids]) as string[] } : {}) });
    this.entries.set(userid, { hash: sha256(authorization), account: frozen, expires: this.now() + this.ttlMs });
  }
}
