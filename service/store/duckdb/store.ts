/** The DuckDB report store: one database file (or `:memory:`), a pool of connections, serialised loads. */
import type { Account, AuctionKeyRecord, Fact, IngestOptions, NewAccount, RecoveryState, ReportQuery, ReportResult, ReportStore } from "../store.js";
import { auctionKeys, createAccount, issueAuctionKey, listAccounts, revokeAccount, verifyCredentials } from "./accounts.js";
import { openDatabase, type ConnectionPool } from "./connection.js";
import { createDictionaries, type Dictionaries } from "./dictionary.js";
import { ingestFacts } from "./ingest.js";
import { readRecoveryState, SWEEP_EVERY_MS } from "./recovery.js";
import { DictionaryNames } from "./names.js";
import { runReport } from "./report.js";

/** `ReportStore` on DuckDB. */
export class DuckDBReportStore implements ReportStore {
  private readonly dictionaries: Dictionaries = createDictionaries();
  private readonly names = new DictionaryNames();
  /** Loads run one after another: they share the dictionary caches. */
  private loads: Promise<unknown> = Promise.resolve();
  /** When expired billing tokens were last deleted (with a load of the exchange's facts). */
  private lastSweep = 0;

  private constructor(private readonly pool: ConnectionPool) {}

  /** Opens a database file (creating its folder) or `:memory:`, running migrations. */
  static async open(db: string): Promise<DuckDBReportStore> {
    return new DuckDBReportStore(await openDatabase(db));
  }

  async ingest(facts: Iterable<Fact> | AsyncIterable<Fact>, options?: IngestOptions): Promise<number> {
    const sweep = options?.checkpoint !== undefined && Date.now() - this.lastSweep >= SWEEP_EVERY_MS;
    if (sweep) this.lastSweep = Date.now();
    const load = this.loads.then(() => this.pool.use((connection) => ingestFacts(connection, this.dictionaries, facts, options, sweep)));
    this.loads = load.catch(() => undefined);
    const counts = await load;
    return counts.supply + counts.demand;
  }

  recoveryState(name: string, now: number): Promise<RecoveryState> {
    return this.pool.use((connection) => readRecoveryState(connection, name, now));
  }

  report(query: ReportQuery): Promise<ReportResult> {
    return this.pool.use((connection) => runReport(connection, this.names, query));
  }

  createAccount(a: NewAccount): Promise<{ userid: string; authorization: string }> {
    return this.pool.use((connection) => createAccount(connection, a));
  }

  listAccounts(): Promise<Account[]> {
    return this.pool.use((connection) => listAccounts(connection));
  }

  revokeAccount(userid: string): Promise<boolean> {
    return this.pool.use((connection) => revokeAccount(connection, userid));
  }

  verifyCredentials(userid: string, authorization: string): Promise<Account | null> {
    return this.pool.use((connection) => verifyCredentials(connection, userid, authorization));
  }

  async ping(): Promise<void> {
    await this.pool.use((connection) => connection.run("SELECT 1"));
  }

  issueAuctionKey(userid: string): Promise<string | null> {
    return this.pool.use((connection) => issueAuctionKey(connection, userid));
  }

  auctionKeys(): Promise<AuctionKeyRecord[]> {
    return this.pool.use((connection) => auctionKeys(connection));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
