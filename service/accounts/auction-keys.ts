/**
 * The auction keys of supply accounts, as the exchange checks them on every POST
 * /openrtb2/auction: a table of key hashes in memory, loaded from the report store at start,
 * every `refreshMs`, and on an unknown key when the table is older than `missRefreshMs` (so a
 * new key works within a second, and a flood of wrong keys costs the store one query a second).
 * The auction never waits for the store otherwise. A revoked account or a replaced key stops
 * working when the table is reloaded: at once through this process (the admin API), at the next
 * poll of the account changes on ClickHouse (service/accounts/account-changes.ts), and at the
 * latest after `refreshMs`.
 *
 * A key is 256 random bits, looked up by its SHA-256: the hash names the account, so no userid
 * travels with it and there is nothing to compare byte by byte (finding a hash in the table
 * tells nothing about any other key).
 */
import { createHash } from "node:crypto";
import { ACCOUNTS_BACKSTOP_MS } from "../store/credentials-cache.js";
import type { AuctionKeyRecord } from "../store/store.js";

/** Where the keys come from: the report store. */
export interface AuctionKeySource {
  auctionKeys(): Promise<AuctionKeyRecord[]>;
}

/** The supply account an auction key belongs to. */
export interface AuctionAccount {
  userid: string;
  publisherIds: ReadonlySet<string>;
}

export interface AuctionKeysOptions {
  /** Period of the full reload (default ACCOUNTS_BACKSTOP_MS): how long a revoked key may still work if nothing else reloads it. */
  refreshMs?: number;
  /** An unknown key reloads the table at most this often (default 1000 ms). */
  missRefreshMs?: number;
  now?: () => number;
  /** Told when a reload fails (the previous table stays in use). */
  onError?: (error: unknown) => void;
}

const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The in-memory table of auction keys; `close()` stops its timer. */
export class AuctionKeys {
  private byHash = new Map<string, AuctionAccount>();
  /** The records the table was built from: a source that gives the same array again had no change, and the table stays. */
  private records: readonly AuctionKeyRecord[] | undefined;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  /** One more load, to start when the running one ends: that one may have read before the change that asked. */
  private queued: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly missRefreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly source: AuctionKeySource,
    private readonly options: AuctionKeysOptions = {},
  ) {
    this.missRefreshMs = options.missRefreshMs ?? 1000;
    this.now = options.now ?? Date.now;
    this.timer = setInterval(() => void this.reload().catch(() => {}), options.refreshMs ?? ACCOUNTS_BACKSTOP_MS);
    this.timer.unref();
  }

  /**
   * Loads the table (the first load's failure is the caller's; later ones keep the old table).
   * While a load runs, a call waits for one more that starts after it (shared by every call in
   * the meantime): what the caller changed before calling is in the table when it resolves.
   */
  reload(): Promise<void> {
    if (this.loading !== undefined) {
      this.queued ??= this.loading
        .catch(() => undefined)
        .then(() => {
          this.queued = undefined;
          return this.reload();
        });
      return this.queued;
    }
    this.loading = this.source
      .auctionKeys()
      .then((records) => {
        this.loadedAt = this.now();
        if (records === this.records) return;
        const byHash = new Map<string, AuctionAccount>();
        for (const record of records) byHash.set(record.key_sha256, { userid: record.userid, publisherIds: new Set(record.publisher_ids) });
        this.byHash = byHash;
        this.records = records;
      })
      .catch((error: unknown) => {
        this.options.onError?.(error);
        throw error;
      })
      .finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** The account of `key` in the table as loaded now, or undefined (no reload: the caller decides what an unknown key gets). */
  known(key: string): AuctionAccount | undefined {
    return this.byHash.get(sha256Hex(key));
  }

  /** The account of `key`, or undefined. An unknown key reloads the table first when the last load is older than missRefreshMs. */
  async verify(key: string): Promise<AuctionAccount | undefined> {
    const hash = sha256Hex(key);
    const account = this.byHash.get(hash);
    if (account !== undefined || this.now() - this.loadedAt < this.missRefreshMs) return account;
    await this.reload().catch(() => {});
    return this.byHash.get(hash);
  }

  close(): void {
    clearInterval(this.timer);
  }
}
