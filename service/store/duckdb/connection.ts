/**
 * Opening the DuckDB file and sharing its connections. A DuckDB connection runs one statement
 * at a time, so concurrent calls each borrow their own from a small pool; every query runs on
 * DuckDB's threads through the async API, never blocking the event loop.
 */
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import { PRIVATE_DIR, PRIVATE_FILE } from "../../private-files.js";
import { availableParallelism } from "node:os";
import { dirname } from "node:path";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { serveDefault, serveSwitchDefault } from "../../serve-defaults.js";
import { StoreError } from "../errors.js";
import { migrate } from "./migrations.js";
import { type BackgroundPriority, lowersThreads, poolThreadIds, putBehind, threadIds } from "../../thread-priority.js";

/** Default number of pooled connections: enough for a few concurrent reports on a small machine. */
export const DEFAULT_POOL_SIZE = 4;

/** Hands out connections, one caller at a time each, and closes them when everyone is done. */
export class ConnectionPool {
  private readonly idle: DuckDBConnection[] = [];
  private readonly all: DuckDBConnection[] = [];
  private readonly waiting: ((connection: DuckDBConnection) => void)[] = [];
  private busy = 0;
  private closed = false;
  private drained?: () => void;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly size: number = DEFAULT_POOL_SIZE,
  ) {}

  /** Runs `work` with a connection of its own and gives the connection back afterwards. */
  async use<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await this.acquire();
    try {
      return await work(connection);
    } finally {
      this.release(connection);
    }
  }

  private async acquire(): Promise<DuckDBConnection> {
    if (this.closed) throw new StoreError("ADX_ERR_STORE_CLOSED", "the report store is closed");
    this.busy++;
    const ready = this.idle.pop();
    if (ready) return ready;
    if (this.all.length < this.size) {
      try {
        const connection = await this.instance.connect();
        this.all.push(connection);
        return connection;
      } catch (error) {
        this.busy--;
        throw error;
      }
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(connection: DuckDBConnection): void {
    const next = this.waiting.shift();
    if (next) return next(connection);
    this.busy--;
    this.idle.push(connection);
    if (this.busy === 0) this.drained?.();
  }

  /** Refuses new work, waits for running work, then closes every connection and the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.busy > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    for (const connection of this.all) connection.closeSync();
    this.all.length = 0;
    this.idle.length = 0;
    this.instance.closeSync();
  }
}

/** Runs work at most `size` at a time, the rest in arrival order. */
export class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next caller, or frees up.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** DuckDB's resources (docs/reports.md, "DuckDB's threads and memory"). */
export interface DuckDBOptions {
  /** Worker threads; default DuckDB's own (every core). A server gives one core less (`serveThreads`). */
  threads?: number;
  /** Memory limit, e.g. `2GB`; default DuckDB's own (80 % of RAM). Past it, large aggregations spill to disk. */
  memoryLimit?: string;
  /** DuckDB's threads and libuv's threadpool (where its queries run) behind the event loop (Linux; none: unchanged), so it comes first. */
  background?: BackgroundPriority;
  poolSize?: number;
}

/** DuckDB's threads in a server: every core but the event loop's, so a heavy report never starves it. */
export const serveThreads = () => Math.max(1, availableParallelism() - 1);

/** A server's background threads unless told otherwise: `backgroundNice`'s and `backgroundIdle`'s defaults (spec/schemas/serve-options.yaml). */
export const serveBackground = (): BackgroundPriority => ({ nice: serveDefault("backgroundNice"), idle: serveSwitchDefault("backgroundIdle") });

/** Opens (creating the folder of) a database file or `:memory:`, and brings its schema up to date. */
export async function openDatabase(db: string, options: DuckDBOptions = {}): Promise<ConnectionPool> {
  const file = db !== ":memory:" && !db.startsWith(":memory:");
  if (file) await mkdir(dirname(db), { recursive: true, mode: PRIVATE_DIR });
  const created = file && !existsSync(db);
  const config: Record<string, string> = {};
  if (options.threads !== undefined) {
    if (!Number.isInteger(options.threads) || options.threads < 1) throw new RangeError(`DuckDB threads must be a positive integer (got ${options.threads})`);
    config.threads = String(options.threads);
  }
  if (options.memoryLimit !== undefined) {
    if (!/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(options.memoryLimit)) throw new RangeError(`DuckDB memory limit must look like 512MB or 2GB (got ${options.memoryLimit})`);
    config.memory_limit = options.memoryLimit;
  }
  const { background } = options;
  const before = lowersThreads(background) ? threadIds() : [];
  const instance = await DuckDBInstance.create(db, config).catch((error: unknown) => {
    throw lockError(db, error) ?? error;
  });
  if (lowersThreads(background)) {
    // DuckDB starts its worker threads with the instance: the threads new since are its own.
    putBehind([...threadIds().filter((tid) => !before.includes(tid)), ...(await poolThreadIds())], background);
  }
  // DuckDB creates the file with the umask's mode (and refuses one made empty beforehand): owner only, now.
  if (created) await chmod(db, PRIVATE_FILE).catch(() => undefined);
  const pool = new ConnectionPool(instance, options.poolSize ?? DEFAULT_POOL_SIZE);
  try {
    await pool.use((connection) => migrate(connection));
  } catch (error) {
    await pool.close();
    throw error;
  }
  return pool;
}

/**
 * DuckDB's "Could not set lock on file … Conflicting lock is held in PROGRAM (PID N)" as a store
 * error naming that process (with its command line where /proc has it), or undefined.
 */
function lockError(db: string, error: unknown): StoreError | undefined {
  const match = /Could not set lock on file .*Conflicting lock is held in (.*?) \(PID (\d+)\)/.exec((error as Error)?.message ?? "");
  if (match === null) return undefined;
  const [, program, pid] = match;
  let command = program;
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ") || program;
  } catch {
    // Not Linux, or the process is gone: DuckDB's own words.
  }
  return new StoreError("ADX_ERR_STORE_LOCKED", `${db} is locked by another process (PID ${pid}: ${command}); DuckDB lets one process open a database file: stop that process or use another database`);
}
