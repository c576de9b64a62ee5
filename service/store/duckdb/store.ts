/** The DuckDB report store: one database file (or `:memory:`), a pool of connections, serialised loads. */
import { parsedReport, type Account, type AuctionKeyRecord, type IngestOptions, type NewAccount, type RecoveryState, type ReportJson, type ReportQuery, type ReportResult, type ReportStore } from "../store.js";
import { auctionKeys, createAccount, issueAuctionKey, listAccounts, revokeAccount, verifyCredentials } from "./accounts.js";
import { availableParallelism } from "node:os";
import { openDatabase, Slots, type ConnectionPool, type DuckDBOptions } from "./connection.js";
import { createDictionaries, type Dictionaries } from "./dictionary.js";
import type { Side } from "@adxkit/bindings/reports";
import { ingestFacts, type Column } from "./ingest.js";
import { readRecoveryState, SWEEP_EVERY_MS } from "./recovery.js";
import { DictionaryCodes } from "./codes.js";
import type { FactInput } from "../fact-source.js";
import { CredentialsCache } from "../credentials-cache.js";
import { ReportFiles, runReportJson } from "./report.js";
import { FixedPlans } from "./fixed-plans.js";
import { AnswerBuffers } from "./answer-buffers.js";
import { DictionaryNames } from "./dictionary-names.js";
import { MAX_ROWS_WRITTEN_IN_JS, rowsShape, writeReportRows } from "./report-rows.js";
import { ReportWriterThread, reportWriterStarter, type StartWriter } from "./report-writer-thread.js";
import { planReport, readsFactDetail } from "../plan.js";

/**
 * Reports of at least this many grouped rows are written on the report writer's thread; smaller
 * ones (one slice of the event loop's writer, ~1 ms) cost the event loop as much CPU through the
 * thread as written in place: 930 rows 2.25 / 2.26 ms, 3,720 rows 3.15 / 2.83 ms, 31,000 rows
 * 28.2 / 5.9 ms (bench/report-writer.ts, docs/benchmarks.md, "The read side, part nine").
 */
export const WRITER_FROM_ROWS = 2048;

/** `ReportStore` on DuckDB. */
export class DuckDBReportStore implements ReportStore {
  private readonly dictionaries: Dictionaries = createDictionaries();
  private readonly codes = new DictionaryCodes();
  private readonly reportFiles = new ReportFiles();
  private readonly answerBuffers = new AnswerBuffers();
  private readonly names = new DictionaryNames();
  private readonly writer: ReportWriterThread;
  /** Small reports' plans made with their values as literals, made again after each load (fixed-plans.ts). */
  private readonly fixedPlans: FixedPlans;
  /** One process holds the file (connection.ts), so every revocation passes through here: no expiry needed. */
  private readonly credentials = new CredentialsCache({ ttlMs: Number.POSITIVE_INFINITY });
  /** The hourly tables' columns, read at the first load. */
  private readonly layout = new Map<Side, Column[]>();
  /** Loads run one after another: they share the dictionary caches. */
  private loads: Promise<unknown> = Promise.resolve();
  /** When expired billing tokens were last deleted (with a load of the exchange's facts). */
  private lastSweep = 0;

  /**
   * Reports reading the facts' detail run at most as many at a time as DuckDB has threads: each
   * runs on a thread of its own, so more would take the core the event loop was left (a server
   * gives DuckDB one core less); summary and monthly reports, and accounts, never wait for them.
   * A report keeps its slot until its rows are written (on the writer's thread for a large one):
   * freed after the query, the next query ran beside the writing, two cores of heavy work on a
   * 2-core server. Cheap p99 during heavy reports lower in 4 of 4 alternated pairs (84 → 52,
   * 78 → 40, 100 → 69, 115 → 79 ms), as many heavy reports answered (docs/benchmarks.md, "Heavy
   * reports, part two").
   */
  private readonly detailedReports: Slots;

  private constructor(
    private readonly pool: ConnectionPool,
    private readonly rollups: boolean,
    threads: number,
    private readonly maxRowsInJs: number,
    private readonly writerFromRows: number,
    fixedPlans: boolean,
    startWriter: StartWriter,
  ) {
    this.fixedPlans = new FixedPlans(fixedPlans);
    this.detailedReports = new Slots(threads);
    this.writer = new ReportWriterThread(startWriter);
  }

  /**
   * Opens a database file (creating its folder) or `:memory:`, running migrations.
   * `maxRowsInJs`: reports of up to this many rows are ordered and written in JS (report-rows.ts;
   * 0: all by DuckDB, what tests compare against). `writerFromRows`: those of at least this many
   * are written on the report writer's thread (report-writer-thread.ts; Infinity: none, 1: all),
   * the others on the event loop. `fixedPlans` false: every report binds its values, none is
   * planned with them as literals (fixed-plans.ts; what tests compare against). `startWriter`:
   * the writer's thread, for tests.
   */
  static async open(db: string, options: DuckDBOptions & { rollups?: boolean; maxRowsInJs?: number; writerFromRows?: number; fixedPlans?: boolean; startWriter?: StartWriter } = {}): Promise<DuckDBReportStore> {
    return new DuckDBReportStore(await openDatabase(db, options), options.rollups !== false, options.threads ?? availableParallelism(), options.maxRowsInJs ?? MAX_ROWS_WRITTEN_IN_JS, options.writerFromRows ?? WRITER_FROM_ROWS, options.fixedPlans !== false, options.startWriter ?? reportWriterStarter(options.backgroundNice));
  }

  async ingest(facts: FactInput, options?: IngestOptions): Promise<number> {
    const sweep = options?.checkpoint !== undefined && Date.now() - this.lastSweep >= SWEEP_EVERY_MS;
    if (sweep) this.lastSweep = Date.now();
    // Once a load ends, values reports found in no dictionary are looked up again (codes.ts), and
    // plans made with literals are made again (fixed-plans.ts: none is made or run during the load).
    const write = async () => {
      await this.fixedPlans.writing();
      try {
        return await this.pool.use((connection) => ingestFacts(connection, this.dictionaries, this.layout, facts, options, sweep));
      } finally {
        this.fixedPlans.written();
        this.codes.loaded((dimension, value) => this.dictionaries.get(dimension)?.holds(value));
      }
    };
    const load = this.loads.then(write);
    this.loads = load.catch(() => undefined);
    const counts = await load;
    // The plans run before this load made again now, not in the next reports (fixed-plans.ts).
    if (this.fixedPlans.refreshDue) void this.pool.use((connection) => this.fixedPlans.refresh(connection)).catch(() => undefined);
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  }

  recoveryState(name: string, now: number): Promise<RecoveryState> {
    return this.pool.use((connection) => readRecoveryState(connection, name, now));
  }

  report(query: ReportQuery): Promise<ReportResult> {
    return parsedReport(this.reportJson(query));
  }

  async reportJson(query: ReportQuery): Promise<ReportJson> {
    const plan = planReport(query, { rollups: this.rollups });
    const run = async (): Promise<ReportJson> => {
      const answer = await this.pool.use((connection) => runReportJson(connection, this.codes, this.reportFiles, this.answerBuffers, plan, this.names, this.maxRowsInJs, this.fixedPlans));
      if (!("kind" in answer)) return answer;
      // Written after the connection is given back: another report's query runs meanwhile.
      const { bytes, release } = answer.rows >= this.writerFromRows ? await this.writer.write(answer, rowsShape(plan), this.answerBuffers) : await writeReportRows(answer, plan, this.answerBuffers);
      return { total: answer.rows, rowsJson: bytes, release };
    };
    return readsFactDetail(plan) ? this.detailedReports.run(run) : run();
  }

  createAccount(a: NewAccount): Promise<{ userid: string; authorization: string }> {
    return this.pool.use((connection) => createAccount(connection, a));
  }

  listAccounts(): Promise<Account[]> {
    return this.pool.use((connection) => listAccounts(connection));
  }

  async revokeAccount(userid: string): Promise<boolean> {
    this.credentials.forget(userid);
    try {
      return await this.pool.use((connection) => revokeAccount(connection, userid));
    } finally {
      this.credentials.forget(userid);
    }
  }

  verifyCredentials(userid: string, authorization: string): Promise<Account | null> {
    return this.credentials.verify(userid, authorization, () => this.pool.use((connection) => verifyCredentials(connection, userid, authorization)));
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

  async close(): Promise<void> {
    await this.pool.close();
    await this.writer.close();
    this.reportFiles.remove();
  }
}
