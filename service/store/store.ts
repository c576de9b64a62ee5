/**
 * The report store: hourly facts in, report rows out, plus the accounts that may read them.
 * One small interface so the routes never see the engine; DuckDB implements it today
 * (`duckdb/`), a ClickHouse backend can implement it later without touching the routes.
 * Open one with `openStore` from `./index.js`.
 */

import type { Dimension, Fact, FilterName, Metric, Side } from "@adxkit/bindings/reports";
import type { BackgroundPriority } from "../thread-priority.js";
import type { FactInput } from "./fact-source.js";

export type { DemandFact, DemandKey, Dimension, Fact, FilterName, Metric, Side, SupplyFact, SupplyKey } from "@adxkit/bindings/reports";

/** One report request, already validated and bound to the account that asked. */
export interface ReportQuery {
  side: Side;
  /** `YYYY-MM-DDThh:mm:ss`, UTC; an hourly fact is included when start ≤ its hour ≤ end. */
  start: string;
  end: string;
  /** Non-empty, de-duplicated, in requested order. */
  metrics: Metric[];
  /** De-duplicated, in requested order, may be empty (then exactly one total row). */
  dimensions: Dimension[];
  /**
   * A row is kept only when its value is listed. An empty array means no filter. A side ignores
   * the filters its interface does not offer (A offers ad_format only, interface document 4.1
   * rule 2).
   */
  filters: Partial<Record<FilterName, readonly (string | number)[]>>;
  /** 1..50000. */
  limit: number;
  /** The account's own data only: the values of the side's scope dimension it owns (`{ bidder_id }`, `{ publisher_ids }`). */
  scope: { bidder_id: string } | { publisher_ids: string[] };
}

/** One report row: exactly the requested dimensions and metrics, keyed by name. */
export type ReportRow = Record<string, string | number>;

/** Rows after the limit, and how many there were before it. */
export interface ReportResult {
  total: number;
  rows: ReportRow[];
}

/** The same, the rows as the JSON text of their array, made by the engine. */
export interface ReportJson {
  total: number;
  /** The JSON array as text, or as its UTF-8 bytes (DuckDB: they go to the socket without being decoded and encoded again). */
  rowsJson: string | Uint8Array;
  /**
   * When there: call it once nothing reads `rowsJson` any more (written to the socket in full,
   * parsed), and its buffer serves a later report. Not calling it is safe: the buffer is collected.
   */
  release?: () => void;
}

/** A report account, without its credential. */
export interface Account {
  userid: string;
  side: Side;
  bidder_id?: string;
  publisher_ids?: string[];
  /** An old account: supply reports must start after 2020-03-01 (interface document 7, code -5). */
  legacy: boolean;
  /** May use the placement_id and publisher_id dimensions (interface document 2.1). */
  placement_dimensions: boolean;
  /** ISO 8601, UTC, e.g. `2026-11-23T09:30:00.000Z`. */
  created_at: string;
  revoked: boolean;
}

/** What `createAccount` needs: demand takes one bidder_id, supply one or more publisher_ids. */
export interface NewAccount {
  side: Side;
  bidder_id?: string;
  publisher_ids?: string[];
  legacy?: boolean;
  placement_dimensions?: boolean;
}

/** A supply account's auction key, as the exchange's key table holds it: never the key itself. */
export interface AuctionKeyRecord {
  userid: string;
  /** The publishers whose auctions the key may run. */
  publisher_ids: string[];
  /** SHA-256 of the key, hex. */
  key_sha256: string;
}

/** A billing token a load of facts counts: its id, and when it expires (epoch milliseconds). */
export interface CountedBillingToken {
  id: string;
  expiresAt: number;
}

/**
 * A billed impression given apart from the facts, to a store that counts it once per token
 * however often and by whichever node it is given (`ReportStore.countsBilledOnce`).
 */
export interface BilledImpression extends CountedBillingToken {
  /** What the impression adds: one fact per side, keyed by the auction's hour and key. */
  facts: readonly Fact[];
}

/**
 * What the exchange writes together with a flush of its facts (service/events/facts.ts): in the
 * same transaction on DuckDB, right after the facts on ClickHouse (which has no transactions).
 */
export interface IngestOptions {
  /** The spool position these facts cover, under the spool's name: after a crash, replay starts there. */
  checkpoint?: { name: string; position: string };
  /** The billing tokens these facts count: a billing call repeated after a restart still counts once. */
  billingTokens?: readonly CountedBillingToken[];
  /** Billed impressions kept apart from `facts`, for a store that `countsBilledOnce`; each counts once per token id. */
  billed?: readonly BilledImpression[];
}

/** One step of a settling run: a side's days `first`..`last` (`YYYY-MM-DD`), about to be summed, or `done`. */
export interface SettleProgress {
  side: Side;
  first: string;
  last: string;
  done: boolean;
}

/** Options of `ReportStore.settleBilled`. */
export interface SettleOptions {
  /** Told before and after each step (`adxkit settle` prints them: a long history takes a while). */
  onProgress?: (step: SettleProgress) => void;
}

/** What the exchange reads at start to recover from a crash. */
export interface RecoveryState {
  /** The last checkpoint written under the spool's name; undefined when none was. */
  position?: string;
  /** Billing tokens counted and not yet expired. */
  billingTokens: CountedBillingToken[];
}

/** The store every route and command talks to. */
export interface ReportStore {
  /**
   * The store itself counts a billed impression once per token id, whichever exchange node
   * gives it and however often (ClickHouse, shared by several nodes: docs/clickhouse.md). The
   * exchange then gives billed impressions apart (`IngestOptions.billed`) rather than summed
   * into its facts. Absent: the exchange counts each token once itself (DuckDB, one node).
   */
  readonly countsBilledOnce?: boolean;
  /**
   * Loads facts; all-or-nothing: an invalid fact (a `FactError` naming its 1-based position)
   * or any failure loads none of them, and writes none of `options`. Returns how many were loaded.
   * Facts come as objects, or as a source the store reads (`FactSource`: the seeded traffic, an
   * NDJSON file or stream, a bad line then named by its line); DuckDB reads a source on a worker
   * thread.
   */
  ingest(facts: FactInput, options?: IngestOptions): Promise<number>;
  /**
   * Settles the billed impressions that are due into per-day sums (ClickHouse: docs/clickhouse.md,
   * "Settling"), returning the days settled by side; safe on every node at once. Absent where
   * billed impressions are facts like any other (DuckDB). `adxkit serve` runs it periodically,
   * `adxkit settle` once.
   */
  settleBilled?(options?: SettleOptions): Promise<Record<Side, string[]>>;
  /**
   * Billed rows this store wrote late, by side, since it opened: after their day could have been
   * settled (a spool replayed after a crash, a flush retried after an outage); their days were
   * settled again. Beside settleBilled (/metrics).
   */
  lateBilledRows?(): Readonly<Record<Side, number>>;
  /** The checkpoint of spool `name` and the billing tokens counted that expire after `now` (epoch ms). */
  recoveryState(name: string, now: number): Promise<RecoveryState>;
  /** Runs one report on the account's own data. Throws `StoreError` for a malformed query. */
  report(query: ReportQuery): Promise<ReportResult>;
  /**
   * The same report with its rows as JSON text, made by the engine: what the routes send, so
   * a report of 50,000 rows never builds 50,000 objects on the event loop.
   */
  reportJson(query: ReportQuery): Promise<ReportJson>;
  /** Creates an account; the authorization credential is returned here once and never again. */
  createAccount(a: NewAccount): Promise<{ userid: string; authorization: string }>;
  /** Every account, oldest first, without credentials. */
  listAccounts(): Promise<Account[]>;
  /** Revokes an account; false when the userid is unknown. */
  revokeAccount(userid: string): Promise<boolean>;
  /** The account when the pair is right and not revoked, else null. */
  verifyCredentials(userid: string, authorization: string): Promise<Account | null>;
  /**
   * Whether the accounts or auction keys changed, through any process sharing the store, since
   * the last call (the first call says true): when they did, the store has forgotten the
   * credentials it cached, and the caller reloads the auction keys. `adxkit serve` polls it every
   * accounts-poll-ms (spec x-adxkit-auction revocation). Absent where every change goes through
   * the one process that owns the store (DuckDB).
   */
  pollAccountChanges?(): Promise<boolean>;
  /** Answers a trivial query: the store is reachable (the server's /ready). Throws like any call when it is not. */
  ping(): Promise<void>;
  /**
   * Issues a new auction key to a live supply account (replacing its previous one) and returns
   * it, here only; null when the userid names no such account.
   */
  issueAuctionKey(userid: string): Promise<string | null>;
  /**
   * The auction keys of live supply accounts (hashes only), for the exchange to check against.
   * A store may give the same array again while nothing changed (DuckDB does): callers read it, never change it.
   */
  auctionKeys(): Promise<AuctionKeyRecord[]>;
  /** Waits for running calls, then frees the engine; later calls fail with `ADX_ERR_STORE_CLOSED`. */
  close(): Promise<void>;
}

/** Options of `openStore`. */
export interface StoreOptions {
  /** A database file (its folder is created) or `:memory:`. */
  db: string;
  /** Read rollups where they answer a report exactly (default true); false reads the hourly facts only. */
  rollups?: boolean;
  /** DuckDB's worker threads (default DuckDB's: every core; `adxkit serve` gives one less, so the event loop keeps a core). */
  duckdbThreads?: number;
  /** DuckDB's memory limit, e.g. `2GB` (default: DuckDB's own, 80 % of RAM). */
  duckdbMemoryLimit?: string;
  /**
   * DuckDB's threads, libuv's threadpool (where DuckDB's queries run) and the report writer's
   * thread behind the event loop (Linux; service/thread-priority.ts), so that it comes first for
   * a core (default: none changed; a server's: `serveBackground()`).
   */
  background?: BackgroundPriority;
}

/** `report` from `reportJson`: the rows parsed (for callers that want objects). */
export async function parsedReport(json: Promise<ReportJson>): Promise<ReportResult> {
  const { total, rowsJson, release } = await json;
  const text = typeof rowsJson === "string" ? rowsJson : Buffer.from(rowsJson.buffer, rowsJson.byteOffset, rowsJson.byteLength).toString("utf8");
  // The text is a copy: the bytes' buffer may serve the next report.
  release?.();
  return { total, rows: JSON.parse(text) as ReportRow[] };
}
