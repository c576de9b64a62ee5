/** The DuckDB report store: one database file (or `:memory:`), a pool of connections, serialised loads. */
import { parsedReport, type Account, type AuctionKeyRecord, type IngestOptions, type NewAccount, type RecoveryState, type ReportJson, type ReportQuery, type ReportResult, type ReportStore } from "../store.js";
import { auctionKeysJson, createAccount, issueAuctionKey, listAccounts, revokeAccount, verifyCredentials } from "./accounts.js";
import { availableParallelism } from "node:os";
import { openDatabase, Slots, type ConnectionPool, type DuckDBOptions } from "./connection.js";
import { createDictionaries, type Dictionaries } from "./dictionary.js";
import type { Side } from "@adxkit/bindings/reports";
import type { DuckDBConnection } from "@duckdb/node-api";
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
import { compactPeriod, readMixedPeriods, RollupPeriods, type MixedPeriod } from "./rollup-periods.js";

/**
 * A load that leaves periods written by more than one load compacts them after it, at most this
 * often (rollup-periods.ts): the exchange's one-second flushes then add at most a minute of
 * loads' rows per key to the day and month in progress before they are one row per key again.
 */
export const COMPACT_EVERY_MS = 60_000;

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
  /** The rollups' periods written by more than one load (rollup-periods.ts). */
  private readonly periods = new RollupPeriods();
  /** When the rollups were last compacted after a load. */
  private lastCompaction = 0;

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
    private readonly compactEveryMs: number,
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
   * the writer's thread, for tests. `compactEveryMs`: how often loads compact the rollups
   * (COMPACT_EVERY_MS; Infinity: only `compactRollups` does, for tests).
   */
  static async open(
    db: string,
    options: DuckDBOptions & { rollups?: boolean; maxRowsInJs?: number; writerFromRows?: number; fixedPlans?: boolean; startWriter?: StartWriter; compactEveryMs?: number } = {},
  ): Promise<DuckDBReportStore> {
    const pool = await openDatabase(db, options);
    const store = new DuckDBReportStore(pool, options.rollups !== false, options.threads ?? availableParallelism(), options.maxRowsInJs ?? MAX_ROWS_WRITTEN_IN_JS, options.writerFromRows ?? WRITER_FROM_ROWS, options.fixedPlans !== false, options.startWriter ?? reportWriterStarter(options.background), options.compactEveryMs ?? COMPACT_EVERY_MS);
    try {
      store.periods.set(await pool.use(readMixedPeriods));
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /**
   * Runs a write after the loads before it: no plan made with literals (fixed-plans.ts) or
   * trusting the rollups' record (rollup-periods.ts) runs meanwhile, and the record it leaves is
   * read in its transaction (`record`), or after it when it failed.
   */
  private write<T>(work: (connection: DuckDBConnection, record: (connection: DuckDBConnection) => Promise<void>) => Promise<T>): Promise<T> {
    const write = async () => {
      await this.fixedPlans.writing();
      await this.periods.writing();
      let left: MixedPeriod[] | undefined;
      try {
        return await this.pool.use((connection) => work(connection, async (c) => void (left = await readMixedPeriods(c))));
      } catch (error) {
        left = await this.pool.use(readMixedPeriods).catch(() => undefined);
        throw error;
      } finally {
        this.periods.written(left);
        this.fixedPlans.written();
        this.codes.loaded((dimension, value) => this.dictionaries.get(dimension)?.holds(value));
      }
    };
    const done = this.loads.then(write);
    this.loads = done.catch(() => undefined);
    // The plans run before this write made again now, not in the next reports (fixed-plans.ts).
    void this.loads.then(() => (this.fixedPlans.refreshDue ? this.pool.use((connection) => this.fixedPlans.refresh(connection)) : undefined)).catch(() => undefined);
    return done;
  }

  /**
   * Compacts every rollup period written by more than one load into one row per key (each
   * period in a transaction of its own), after the loads before it; returns how many it
   * compacted. Loads start it themselves, at most every COMPACT_EVERY_MS.
   */
  compactRollups(): Promise<number> {
    this.lastCompaction = Date.now();
    return this.write(async (connection, record) => {
      const periods = this.periods.list();
      for (const period of periods) await compactPeriod(connection, period);
      await record(connection);
      return periods.length;
    });
  }

  /** The rollups' periods written by more than one load since they were last compacted. */
  mixedPeriods(): MixedPeriod[] {
    return this.periods.list();
  }

  async ingest(facts: FactInput, options?: IngestOptions): Promise<number> {
    const sweep = options?.checkpoint !== undefined && Date.now() - this.lastSweep >= SWEEP_EVERY_MS;
    if (sweep) this.lastSweep = Date.now();
    // Once a load ends, values reports found in no dictionary are looked up again (codes.ts), and
    // plans made with literals are made again (fixed-plans.ts: none is made or run during the load).
    const counts = await this.write((connection, record) => ingestFacts(connection, this.dictionaries, this.layout, facts, options, sweep, record));
    if (this.periods.list().length > 0 && Date.now() - this.lastCompaction >= this.compactEveryMs) {
      // In the background, after this load: the next load waits for it. A failure (the store
      // closing) leaves the periods as they were, for the next load to compact.
      this.compactRollups().catch(() => undefined);
    }
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  }

  recoveryState(name: string, now: number): Promise<RecoveryState> {
    return this.pool.use((connection) => readRecoveryState(connection, name, now));
  }

  report(query: ReportQuery): Promise<ReportResult> {
    return parsedReport(this.reportJson(query));
  }

  async reportJson(query: ReportQuery): Promise<ReportJson> {
    const version = this.periods.current;
    const planned = planReport(query, { rollups: this.rollups, uniqueRows: this.periods.uniqueRows });
    const run = async (): Promise<ReportJson> => {
      // Rows read without grouping only while no write has begun since the plan (rollup-periods.ts).
      const trusted = planned.rowsAreGroups ? this.periods.reading(version) : undefined;
      const plan = planned.rowsAreGroups && trusted === undefined ? { ...planned, rowsAreGroups: false } : planned;
      let answer: Awaited<ReturnType<typeof runReportJson>>;
      try {
        answer = await this.pool.use((connection) => runReportJson(connection, this.codes, this.reportFiles, this.answerBuffers, plan, this.names, this.maxRowsInJs, this.fixedPlans));
      } finally {
        trusted?.();
      }
      if (!("kind" in answer)) return answer;
      // Written after the connection is given back: another report's query runs meanwhile.
      const { bytes, release, groups } = answer.rows >= this.writerFromRows ? await this.writer.write(answer, rowsShape(plan), this.answerBuffers) : await writeReportRows(answer, plan, this.answerBuffers);
      return { total: groups, rowsJson: bytes, release };
    };
    return readsFactDetail(planned) ? this.detailedReports.run(run) : run();
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

  /** The last table of auction keys read, as its text and records: an unchanged one is given again as it was. */
  private keys: { text: string; records: AuctionKeyRecord[] } | undefined;

  async auctionKeys(): Promise<AuctionKeyRecord[]> {
    const text = await this.pool.use(auctionKeysJson);
    if (this.keys?.text !== text) this.keys = { text, records: JSON.parse(text) as AuctionKeyRecord[] };
    return this.keys.records;
  }

  async close(): Promise<void> {
    await this.pool.close();
    await this.writer.close();
    this.reportFiles.remove();
  }
}
