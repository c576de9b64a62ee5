/** The ClickHouse report store: one HTTP client, serialised loads, the same semantics as the DuckDB store. */
import { parsedReport, type SettleOptions, type Side, type Account, type AuctionKeyRecord, type IngestOptions, type NewAccount, type RecoveryState, type ReportJson, type ReportQuery, type ReportResult, type ReportStore } from "../store.js";
import { accountChangeCount, auctionKeys, createAccount, issueAuctionKey, listAccounts, revokeAccount, verifyCredentials } from "./accounts.js";
import { ClickHouseConnection, type ClickHouseOptions, type ServerInfo } from "./connection.js";
import { insertBilled } from "./billed.js";
import { ingestClickHouse } from "./ingest.js";
import { readRecoveryState, SWEEP_EVERY_MS, writeRecovery } from "./recovery.js";
import { runReportJson } from "./report.js";
import { lateRows, markLateDays, readSettledBefore, settleMarked, settleBilled, type SettledBefore, type SettleRun } from "./settle.js";
import { auctionRules } from "@adxkit/bindings";
import { reportModel } from "@adxkit/bindings/reports";
import { ACCOUNTS_BACKSTOP_MS, CredentialsCache } from "../credentials-cache.js";
import { factsOf, isFactSource, type FactInput } from "../fact-source.js";

/** How long a node's reports use the settled days it last read before reading them again. */
export const SETTLED_REFRESH_MS = auctionRules.settleEveryMs;

/** `ReportStore` on ClickHouse (current servers with bound parameters; 18.x with escaped literals). */
export class ClickHouseReportStore implements ReportStore {
  /** Billed impressions are rows per token, collapsed by the engine (billed.ts): once across nodes. */
  readonly countsBilledOnce = true;
  /** Loads of one store run one after another, as in the DuckDB store. */
  private loads: Promise<unknown> = Promise.resolve();
  /** When expired billing tokens were last deleted. */
  private lastSweep = 0;
  private readonly credentials: CredentialsCache;
  /** Billed rows written late, by side (lateBilledRows). */
  private readonly lateRows = Object.fromEntries(Object.keys(reportModel.sides).map((side) => [side, 0])) as Record<Side, number>;
  /** The count of account changes at the last poll (pollAccountChanges); undefined before the first. */
  private accountChanges: number | undefined;
  /** The settled days reports read sums of, and when they were read (settledBefore). */
  private settled: { readAt: number; before: SettledBefore } | undefined;

  private constructor(
    private readonly connection: ClickHouseConnection,
    private readonly rollups: boolean,
    credentialsTtlMs: number,
  ) {
    this.credentials = new CredentialsCache({ ttlMs: credentialsTtlMs });
  }

  /**
   * Connects (`url` like `http://127.0.0.1:8123/adxkit`), creates the database and migrates;
   * `rollups: false` reads the hourly facts only; `credentialsTtlMs` (default the spec's
   * accounts-backstop-ms) bounds how long a verified credential is trusted without a change seen.
   */
  static async open(options: ClickHouseOptions & { rollups?: boolean; credentialsTtlMs?: number } = {}): Promise<ClickHouseReportStore> {
    return new ClickHouseReportStore(await ClickHouseConnection.open(options), options.rollups !== false, options.credentialsTtlMs ?? ACCOUNTS_BACKSTOP_MS);
  }

  /** The server's version and whether it binds query parameters. */
  get server(): ServerInfo {
    return this.connection.server;
  }

  /** The database the store's tables live in. */
  get database(): string {
    return this.connection.database;
  }

  async ingest(input: FactInput, options?: IngestOptions): Promise<number> {
    // Read here: the client's RowBinary is written from fact objects (clickhouse/ingest.ts).
    const facts = isFactSource(input) ? factsOf(input) : input;
    const sweep = options?.checkpoint !== undefined && Date.now() - this.lastSweep >= SWEEP_EVERY_MS;
    if (sweep) this.lastSweep = Date.now();
    const load = this.loads.then(() =>
      this.connection.use(async () => {
        // First: writing them again (the flush retried after a failure below, a replay after a
        // crash) collapses, so they are exactly once even where the facts are at least once.
        const billed = options?.billed ? await insertBilled(this.connection, options.billed) : 0;
        // After the rows (a crash in between replays both): late rows mark their day and settle it again.
        if (options?.billed) {
          const late = lateRows(options.billed, Date.now());
          await settleMarked(this.connection, await markLateDays(this.connection, late));
          for (const row of late) this.lateRows[row.side]++;
        }
        const counts = await ingestClickHouse(this.connection, facts);
        if (options?.checkpoint || options?.billingTokens) await writeRecovery(this.connection, options, sweep);
        return Object.values(counts).reduce((sum, n) => sum + n, billed);
      }),
    );
    this.loads = load.catch(() => undefined);
    return load;
  }

  recoveryState(name: string, now: number): Promise<RecoveryState> {
    return this.connection.use(() => readRecoveryState(this.connection, name, now));
  }

  report(query: ReportQuery): Promise<ReportResult> {
    return parsedReport(this.reportJson(query));
  }

  reportJson(query: ReportQuery): Promise<ReportJson> {
    return this.connection.use(async () => runReportJson(this.connection, query, { rollups: this.rollups, settledBefore: await this.settledBefore() }));
  }

  /**
   * Settles the billed impressions that are due (settle.ts); any node may, at any time, as often
   * as it likes. `adxkit serve` runs it every settle-every-ms (spec x-adxkit-auction).
   */
  settleBilled(options?: SettleOptions): Promise<SettleRun> {
    return this.connection.use(async () => {
      const run = await settleBilled(this.connection, options);
      this.settled = { readAt: Date.now(), before: await readSettledBefore(this.connection) };
      return run;
    });
  }

  /** Billed rows this store wrote late, by side (their days were settled again); for /metrics. */
  lateBilledRows(): Readonly<Record<Side, number>> {
    return { ...this.lateRows };
  }

  /**
   * The first unsettled day of each side, read again after SETTLED_REFRESH_MS. An older answer is
   * still exact (billed rows are kept after settling): reports just read more of them.
   */
  private async settledBefore(): Promise<SettledBefore> {
    if (this.settled === undefined || Date.now() - this.settled.readAt >= SETTLED_REFRESH_MS) {
      this.settled = { readAt: Date.now(), before: await readSettledBefore(this.connection) };
    }
    return this.settled.before;
  }

  createAccount(a: NewAccount): Promise<{ userid: string; authorization: string }> {
    return this.connection.use(() => createAccount(this.connection, a));
  }

  listAccounts(): Promise<Account[]> {
    return this.connection.use(() => listAccounts(this.connection));
  }

  async revokeAccount(userid: string): Promise<boolean> {
    this.credentials.forget(userid);
    try {
      return await this.connection.use(() => revokeAccount(this.connection, userid));
    } finally {
      this.credentials.forget(userid);
    }
  }

  /**
   * Reads the count of account changes that every process sharing the database appends to
   * (accounts.ts); when it moved since the last poll (or this is the first), forgets every cached
   * credential and returns true, for the caller to reload the auction keys.
   */
  async pollAccountChanges(): Promise<boolean> {
    const count = await this.connection.use(() => accountChangeCount(this.connection));
    if (count === this.accountChanges) return false;
    this.accountChanges = count;
    this.credentials.clear();
    return true;
  }

  verifyCredentials(userid: string, authorization: string): Promise<Account | null> {
    return this.credentials.verify(userid, authorization, () => this.connection.use(() => verifyCredentials(this.connection, userid, authorization)));
  }

  ping(): Promise<void> {
    return this.connection.use(() => this.connection.command("SELECT 1"));
  }

  issueAuctionKey(userid: string): Promise<string | null> {
    return this.connection.use(() => issueAuctionKey(this.connection, userid));
  }

  auctionKeys(): Promise<AuctionKeyRecord[]> {
    return this.connection.use(() => auctionKeys(this.connection));
  }

  /** Drops the store's whole database (tests use a database each). */
  dropDatabase(): Promise<void> {
    return this.connection.use(() => this.connection.command(`DROP DATABASE IF EXISTS ${this.connection.database}`));
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
