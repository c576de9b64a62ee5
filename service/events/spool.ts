/**
 * The exchange's write-ahead spool. Every auction and every billing event is in a line (the
 * fact increments it adds, and a billing event's token id) written before its HTTP answer goes
 * out, so that a crash — a kill -9 at any moment — loses nothing that was answered. The report store
 * keeps, in the same transaction as each flush of facts, the spool position that flush covers
 * (its checkpoint); at start the exchange replays the lines after the checkpoint, so every line
 * counts exactly once (service/events/facts.ts, service/auction/exchange.ts and billing-calls.ts).
 *
 * Files in the spool folder: `<segment>.spool` (10-digit numbers, a new one at every start and
 * past `maxSegmentBytes`), `node-id` (names this spool's checkpoint in a shared store) and `lock`
 * (the pid of the process writing; a second live writer is refused).
 * A line: 8 hex digits of the CRC-32 of the JSON, a space, the JSON, "\n". Replay of a segment
 * stops at the first line that is cut short or fails its checksum: a torn last write.
 *
 * Group commit: the lines appended during one turn of the event loop go out in one write(2),
 * after which the process may die without losing them. An append that asks for `sync` (billing)
 * also waits for an fdatasync, shared by every such append written before it started, so it
 * survives the machine too. A line can also be appended as a function that builds its record
 * at that write: events of one turn then share one line (service/events/facts.ts).
 */
import { closeSync, fdatasync, fdatasyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { PRIVATE_DIR, PRIVATE_FILE } from "../private-files.js";

/** A place in the spool: a segment and a count of lines in it. Lines before it are covered. */
export interface SpoolPosition {
  segment: number;
  line: number;
}

/** `segment:line`, as the store keeps it. */
export function formatPosition(position: SpoolPosition): string {
  return `${position.segment}:${position.line}`;
}

/** The position of `formatPosition`'s text, or undefined for anything else. */
export function parsePosition(text: string | undefined): SpoolPosition | undefined {
  const match = text === undefined ? null : /^(\d{1,10}):(\d{1,15})$/.exec(text);
  return match ? { segment: Number(match[1]), line: Number(match[2]) } : undefined;
}

/** A spool folder that another live process writes to. */
export class SpoolLockedError extends Error {
  override readonly name = "SpoolLockedError";
  readonly code = "ADX_ERR_SPOOL_LOCKED";
}

/** A spool folder that belongs to another database: its lines would be replayed into the wrong one. */
export class SpoolOwnerError extends Error {
  override readonly name = "SpoolOwnerError";
  readonly code = "ADX_ERR_SPOOL_DATABASE";
}

export interface SpoolOptions {
  /** A segment past this size is closed and the next one started (default 64 MiB). */
  maxSegmentBytes?: number;
  /**
   * The database the spool's counts go to (a file's absolute path, or a ClickHouse address
   * without credentials). Recorded in the folder at its first open; another is refused
   * (SpoolOwnerError). Unchecked when absent.
   */
  database?: string;
}

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

const SEGMENT = /^(\d{10})\.spool$/;
const segmentName = (n: number) => `${String(n).padStart(10, "0")}.spool`;

/** True when a process with this pid runs (signal 0 tests without signalling). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

/** A spool line: the CRC-32 of the JSON in hex, a space, the JSON, a newline. */
function line(record: unknown): string {
  const json = JSON.stringify(record);
  return `${crc32(json).toString(16).padStart(8, "0")} ${json}\n`;
}

/** A line whose record is built when the line is written (Spool.append). */
export class LineBuilder {
  constructor(readonly build: () => unknown) {}
}

/** An open spool folder: replay what is there, then append. */
export class Spool {
  readonly dir: string;
  readonly nodeId: string;
  private readonly maxSegmentBytes: number;
  private fd: number | undefined;
  private segment = 0;
  private lines = 0;
  private bytes = 0;
  /** Lines appended and not written yet (text, or a builder of the record), with their waiters (plain and sync). */
  private pending: (string | (() => unknown))[] = [];
  private pendingWaiters: Waiter[] = [];
  private pendingSyncWaiters: Waiter[] = [];
  /** Sync appends already written, waiting for the next fdatasync. */
  private unsynced: Waiter[] = [];
  private syncing = false;
  /** Descriptors of rotated segments, closed once the fdatasync running on them ends. */
  private retired: number[] = [];
  private scheduled = false;
  private started = false;
  private closed = false;
  private counters = { appended: 0, writes: 0, syncs: 0, failures: 0, released: 0 };

  private constructor(dir: string, nodeId: string, options: SpoolOptions) {
    this.dir = dir;
    this.nodeId = nodeId;
    this.maxSegmentBytes = options.maxSegmentBytes ?? 64 * 1024 * 1024;
    this.segment = Math.max(0, ...this.segments());
  }

  /** Opens (creating) a spool folder and takes its lock; throws SpoolLockedError if a live process holds it. */
  static open(dir: string, options: SpoolOptions = {}): Spool {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    if (options.database !== undefined) {
      const file = join(dir, "database");
      let recorded: string | undefined;
      try {
        recorded = readFileSync(file, "utf8").trim();
      } catch {
        writeFileSync(file, `${options.database}\n`, { mode: PRIVATE_FILE });
      }
      if (recorded !== undefined && recorded !== options.database) {
        throw new SpoolOwnerError(`spool ${dir} belongs to the database ${recorded}, not ${options.database}: its lines would be replayed into the wrong one; give each database its own spool folder`);
      }
    }
    const lock = join(dir, "lock");
    try {
      writeFileSync(lock, String(process.pid), { flag: "wx", mode: PRIVATE_FILE });
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(lock, "utf8").trim());
      if (Number.isInteger(holder) && alive(holder)) {
        throw new SpoolLockedError(`spool ${dir} is in use by process ${holder}`);
      }
      // Left by a process that died (a crash is what the spool is for): take it over.
      writeFileSync(lock, String(process.pid), { mode: PRIVATE_FILE });
    }
    const idFile = join(dir, "node-id");
    let nodeId: string;
    try {
      nodeId = readFileSync(idFile, "utf8").trim();
    } catch {
      nodeId = randomBytes(8).toString("hex");
      writeFileSync(idFile, nodeId, { mode: PRIVATE_FILE });
    }
    return new Spool(dir, nodeId, options);
  }

  /** Segment numbers present, ascending. */
  private segments(): number[] {
    return readdirSync(this.dir)
      .map((name) => SEGMENT.exec(name)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  /**
   * The records after `after` (all of them when undefined), oldest first, each with the
   * position just past it. A segment's replay stops at its first torn or corrupt line.
   */
  *replay(after?: SpoolPosition): Generator<{ record: unknown; position: SpoolPosition }> {
    for (const segment of this.segments()) {
      if (after !== undefined && segment < after.segment) continue;
      const skip = after !== undefined && segment === after.segment ? after.line : 0;
      const text = readFileSync(join(this.dir, segmentName(segment)), "utf8");
      let line = 0;
      for (let start = 0; start < text.length; ) {
        const end = text.indexOf("\n", start);
        if (end === -1) break; // cut short by a crash in the middle of a write
        const json = text.slice(start + 9, end);
        if (text[start + 8] !== " " || crc32(json).toString(16).padStart(8, "0") !== text.slice(start, start + 8)) break;
        start = end + 1;
        line++;
        if (line <= skip) continue;
        yield { record: JSON.parse(json), position: { segment, line } };
      }
    }
  }

  /** Starts appending to a new segment (after replay: earlier segments are never appended to again). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.openSegment(this.segment + 1);
  }

  private openSegment(segment: number): void {
    this.fd = openSync(join(this.dir, segmentName(segment)), "a", PRIVATE_FILE);
    this.segment = segment;
    this.lines = 0;
    this.bytes = 0;
  }

  /** Where the next line goes: every line appended so far (written or not yet) is before it. */
  get position(): SpoolPosition {
    return { segment: this.segment, line: this.lines + this.pending.length };
  }

  /**
   * Appends one record. The promise resolves once the line is written (the process may die),
   * with `sync` once it is also on disk (the machine may die); it rejects when the write fails.
   * A `LineBuilder` is called at the write instead, and its record written: until then the
   * caller may still add to what it will return.
   */
  append(record: unknown, sync = false): Promise<void> {
    if (this.closed || !this.started) return Promise.reject(new Error(this.closed ? "spool closed" : "spool not started"));
    if (this.fd === undefined) {
      // A rotation could not open the next segment: try again before this line counts in one.
      try {
        this.openSegment(this.segment + 1);
      } catch (error) {
        this.counters.failures++;
        return Promise.reject(error);
      }
    }
    this.pending.push(record instanceof LineBuilder ? record.build : line(record));
    this.counters.appended++;
    return this.waitForCommit(sync);
  }

  /**
   * Resolves once every line appended so far is on disk (written, then fdatasync'd); rejects
   * when that fails. For an event that joined a line appended earlier in the turn.
   */
  durable(): Promise<void> {
    if (this.closed || !this.started) return Promise.reject(new Error(this.closed ? "spool closed" : "spool not started"));
    if (this.pending.length > 0) return this.waitForCommit(true);
    // Everything is written: wait for an fdatasync that starts after this call.
    const done = new Promise<void>((resolve, reject) => this.unsynced.push({ resolve, reject }));
    this.syncNow();
    return done;
  }

  private waitForCommit(sync: boolean): Promise<void> {
    const done = new Promise<void>((resolve, reject) => (sync ? this.pendingSyncWaiters : this.pendingWaiters).push({ resolve, reject }));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.commit());
    }
    return done;
  }

  /**
   * Writes what is pending in one write(2), then starts an fdatasync if a sync append waits.
   * The only place a segment is rotated: right after a write, when no line is pending, so every
   * position counted so far lies in the segment being closed.
   */
  private commit(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    let text = "";
    for (const entry of this.pending) text += typeof entry === "string" ? entry : line(entry());
    const data = Buffer.from(text);
    const count = this.pending.length;
    const written = this.pendingWaiters;
    const toSync = this.pendingSyncWaiters;
    this.pending = [];
    this.pendingWaiters = [];
    this.pendingSyncWaiters = [];
    try {
      for (let offset = 0; offset < data.length; ) offset += writeSync(this.fd!, data, offset);
      this.counters.writes++;
      this.lines += count;
      this.bytes += data.length;
    } catch (error) {
      this.counters.failures++;
      // This batch's lines are lost for the crash case (their counts still reach the store at the
      // next flush); their positions stay past the segment's end, and a fresh segment follows.
      for (const waiter of [...written, ...toSync]) waiter.reject(error as Error);
      this.rotate();
      return;
    }
    for (const waiter of written) waiter.resolve();
    this.unsynced.push(...toSync);
    if (this.bytes >= this.maxSegmentBytes) this.rotate();
    this.syncNow();
  }

  /** One fdatasync at a time; the sync appends written before it started are settled by it. */
  private syncNow(): void {
    if (this.syncing || this.unsynced.length === 0 || this.fd === undefined) return;
    this.syncing = true;
    const waiters = this.unsynced;
    this.unsynced = [];
    fdatasync(this.fd, (error) => {
      this.syncing = false;
      this.counters.syncs++;
      for (const waiter of waiters) (error ? waiter.reject(error) : waiter.resolve());
      // Segments rotated while this sync ran are closed only now (their fd was still in use).
      for (const fd of this.retired.splice(0)) closeSync(fd);
      if (!this.closed) this.syncNow();
    });
  }

  /** Closes the segment (its sync appends settled by one last fdatasync) and opens the next. */
  private rotate(): void {
    const fd = this.fd;
    if (fd === undefined) return;
    this.fd = undefined;
    let failure: Error | undefined;
    try {
      fdatasyncSync(fd);
    } catch (error) {
      failure = error as Error;
    }
    for (const waiter of this.unsynced.splice(0)) (failure ? waiter.reject(failure) : waiter.resolve());
    if (this.syncing) this.retired.push(fd);
    else closeSync(fd);
    try {
      this.openSegment(this.segment + 1);
    } catch {
      // append opens one before its line counts, or fails.
    }
  }

  /** Deletes the segments wholly before `position`: the store holds their facts. */
  release(position: SpoolPosition): void {
    for (const segment of this.segments()) {
      if (segment >= position.segment || segment >= this.segment) break;
      rmSync(join(this.dir, segmentName(segment)), { force: true });
      this.counters.released++;
    }
  }

  /** Writes and syncs what is pending, closes the segment, gives up the lock. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.commit();
    while (this.syncing) await new Promise((resolve) => setImmediate(resolve));
    this.closed = true;
    if (this.fd !== undefined) {
      fdatasyncSync(this.fd);
      closeSync(this.fd);
      this.fd = undefined;
    }
    for (const waiter of this.unsynced.splice(0)) waiter.resolve();
    for (const fd of this.retired.splice(0)) closeSync(fd);
    rmSync(join(this.dir, "lock"), { force: true });
  }

  /** Counters: lines appended, write(2) and fdatasync calls, failed writes, segments released. */
  stats(): { appended: number; writes: number; syncs: number; failures: number; released: number; segment: number } {
    return { ...this.counters, segment: this.segment };
  }
}
