/**
 * Loading facts: one transaction per call. Facts arrive as columnar blocks (../fact-blocks.ts):
 * from a load's worker thread when the load reads a source (seed, NDJSON), else encoded here from
 * the facts given. Each block's strings are mapped to the store's dictionary codes and its
 * columns copied into data chunks (2,048 rows) for DuckDB's Appender; at the end the new
 * dictionary entries, the load's rollups and the periods it wrote (rollup-periods.ts) are
 * written, then everything commits, or nothing does. Which value goes in which column follows the report model (layout.ts).
 */
import duckdb from "@duckdb/node-bindings";
import { BIGINT, VARCHAR, DOUBLE, INTEGER, TIMESTAMP, DuckDBDataChunk, timestampValue, type DuckDBAppender, type DuckDBConnection, type DuckDBType } from "@duckdb/node-api";
import { reportModel, type Side } from "@adxkit/bindings/reports";
import { FactError } from "../errors.js";
import { FactBlockThread } from "../fact-block-thread.js";
import { blockLayout, FactBlockEncoder, Held, SIDES, type BlockLayout, type FactBlock } from "../fact-blocks.js";
import { isFactSource, type FactInput } from "../fact-source.js";
import type { Fact, IngestOptions } from "../store.js";
import type { Dictionaries, Dictionary } from "./dictionary.js";
import { columnOf, rollupStatements } from "./layout.js";
import { writeRecovery } from "./recovery.js";
import { recordPeriodsStatement } from "./rollup-periods.js";
import { CHUNK_ROWS, insertRows, registerRowScan, type RowChunk } from "./row-scan.js";

/**
 * The store's dictionary code of each load code (fact-blocks.ts) of each string dimension,
 * learnt from the blocks' new strings: mapping a block's string column is then one typed-array
 * read per row.
 */
class LoadCodes {
  private readonly codes = new Map<string, { dictionary: Dictionary; storeCodes: Int32Array; size: number }>();

  constructor(dictionaries: Dictionaries) {
    for (const [dimension, dictionary] of dictionaries) this.codes.set(dimension, { dictionary, storeCodes: new Int32Array(1024), size: 0 });
  }

  /** Learns the codes of the strings a block coded first. */
  learn(block: FactBlock): void {
    for (const dimension in block.newStrings) {
      const strings = block.newStrings[dimension];
      const entry = this.codes.get(dimension)!;
      if (entry.size + strings.length > entry.storeCodes.length) {
        const grown = new Int32Array(Math.max(2 * entry.storeCodes.length, entry.size + strings.length));
        grown.set(entry.storeCodes);
        entry.storeCodes = grown;
      }
      for (const text of strings) entry.storeCodes[entry.size++] = entry.dictionary.code(text);
    }
  }

  /** Rewrites `rows` load codes of a dimension, in place, as the store's codes. */
  map(dimension: string, column: Int32Array): void {
    const storeCodes = this.codes.get(dimension)!.storeCodes;
    for (let row = 0; row < column.length; row++) column[row] = storeCodes[column[row]];
  }
}

/**
 * Writes a side's rows of each block to its hourly table: each column's bytes copied from the
 * block as they are, with no work per value but the strings' codes. Node-api's own vectors take
 * a BigInt per 64-bit value: a BigInt per count and timestamp made an eighth of a load's time on
 * the main thread. Facts given here (the exchange's flush every second) are held as chunks and
 * inserted by a query on libuv's pool (row-scan.ts), so that the insert does not hold the event
 * loop. A load from a source (its own process, before anything serves), and one given more than
 * MAX_HELD_CHUNKS, appends to an Appender instead: on DuckDB's side the query's insert costs more,
 * 1.1 M facts given as objects loaded at 365–369k facts/s against 418–480k (docs/benchmarks.md,
 * "The exchange's stalls beside heavy reports").
 */
class SideWriter {
  private chunk: DuckDBDataChunk | undefined;
  /**
   * Per column of the table: where its bytes are in a block, per fact of the block's capacity
   * (-1: the batch column, not in blocks), their width, and the dimension of a string column.
   */
  private readonly sources: { offsetPerFact: number; bytesPerRow: number; text?: string }[] = [];
  private readonly batches = new Int32Array(CHUNK_ROWS);
  private readonly types: DuckDBType[];
  private held: RowChunk[] = [];

  constructor(
    private readonly table: string,
    private readonly side: Side,
    columns: readonly Column[],
    layout: BlockLayout,
    batch: number,
    /** Where a source's rows go; none: they are held (`overflow` makes one for a large load). */
    private appender?: DuckDBAppender,
  ) {
    this.types = columns.map((c) => TYPE_OF_FILL[c.fill]);
    if (appender) this.chunk = DuckDBDataChunk.create(this.types, CHUNK_ROWS);
    this.batches.fill(batch);
    for (const column of columns) {
      if (column.fill === Fill.Batch) {
        this.sources.push({ offsetPerFact: -1, bytesPerRow: 4 });
        continue;
      }
      const held = layout.sides[side].find((c) => c.field === column.field);
      if (!held) throw new Error(`${side}_hourly.${columnOf(column.field)}: no such field in a ${side} fact`);
      this.sources.push({ offsetPerFact: held.byteOffset / layout.capacity, bytesPerRow: held.bytesPerRow, text: held.held === Held.Text ? held.field : undefined });
    }
  }

  /**
   * Writes the block's rows of this side (their string codes mapped in place first); the block
   * is free again when it returns. True when more chunks are held than MAX_HELD_CHUNKS: call
   * `overflow` before the next block.
   */
  append(block: FactBlock, codes: LoadCodes): boolean {
    const rows = block.rows[this.side];
    for (const source of this.sources) if (source.text) codes.map(source.text, new Int32Array(block.buffer, source.offsetPerFact * block.capacity, rows));
    for (let start = 0; start < rows; start += CHUNK_ROWS) {
      const count = Math.min(CHUNK_ROWS, rows - start);
      if (this.chunk === undefined) {
        // Copied: the block's buffer is filled again once this returns.
        const columns = this.sources.map(({ offsetPerFact, bytesPerRow }) =>
          offsetPerFact < 0 ? new Uint8Array(this.batches.buffer, 0, count * 4) : new Uint8Array(block.buffer, offsetPerFact * block.capacity + start * bytesPerRow, count * bytesPerRow).slice(),
        );
        this.held.push({ rows: count, columns });
        continue;
      }
      const raw = this.chunk.chunk;
      for (let column = 0; column < this.sources.length; column++) {
        const { offsetPerFact, bytesPerRow } = this.sources[column];
        const vector = duckdb.data_chunk_get_vector(raw, column);
        if (offsetPerFact < 0) duckdb.copy_data_to_vector(vector, 0, this.batches.buffer, 0, count * 4);
        else duckdb.copy_data_to_vector(vector, 0, block.buffer, offsetPerFact * block.capacity + start * bytesPerRow, count * bytesPerRow);
      }
      this.chunk.rowCount = count;
      this.appender!.appendDataChunk(this.chunk);
    }
    return this.held.length > MAX_HELD_CHUNKS;
  }

  /** Inserts the held chunks; the rest of the load goes to an Appender (a large load given here). */
  async overflow(connection: DuckDBConnection): Promise<void> {
    await this.insertHeld(connection);
    this.appender = await connection.createAppender(this.table);
    this.chunk = DuckDBDataChunk.create(this.types, CHUNK_ROWS);
  }

  private insertHeld(connection: DuckDBConnection): Promise<void> {
    const chunks = this.held;
    this.held = [];
    return insertRows(connection, this.table, { types: this.types, chunks });
  }

  /** Inserts what is held, then closes the Appender if there is one: the rows join the transaction. */
  async finish(connection: DuckDBConnection): Promise<void> {
    await this.insertHeld(connection);
    this.appender?.closeSync();
  }

  /** Drops whatever is buffered; used when the load fails. */
  abandon(): void {
    this.held = [];
    if (!this.appender) return;
    try {
      this.appender.clear();
      this.appender.closeSync();
    } catch {
      // The transaction is rolled back anyway; a failing close changes nothing.
    }
  }
}

/** Chunks of facts given here held for the insert: 32 × 2,048 rows, ~2.5 MB a side; the exchange's flushes hold one or two. */
const MAX_HELD_CHUNKS = 32;

const Fill = { Batch: 0, Hour: 1, Code: 2, Integer: 3, Count: 4, Money: 5 } as const;
type Fill = (typeof Fill)[keyof typeof Fill];

/** How one column of an hourly table is filled from a fact. */
export interface Column {
  fill: Fill;
  field: string;
}

const TYPE_OF_FILL = { [Fill.Batch]: INTEGER, [Fill.Hour]: TIMESTAMP, [Fill.Code]: INTEGER, [Fill.Integer]: INTEGER, [Fill.Count]: BIGINT, [Fill.Money]: DOUBLE };

/**
 * The columns of a side's hourly table, in table order (a dimension added by a migration comes
 * last), each with how the model fills it. A column the model does not know, or a dimension
 * without its column, means the schema and the model disagree: the load is refused. Read once
 * per store (the schema is migrated at open).
 */
export async function hourlyColumns(connection: DuckDBConnection, side: Side): Promise<Column[]> {
  const table = `${side}_hourly`;
  const reader = await connection.runAndReadAll("SELECT column_name FROM duckdb_columns() WHERE table_name = $1 AND schema_name = 'main' ORDER BY column_index", [table], [VARCHAR]);
  const names = reader.getRowsJS().map((row) => String(row[0]));
  const fromModel = new Map<string, Column>([["batch", { fill: Fill.Batch, field: "batch" }]]);
  for (const dimension of reportModel.sides[side].key) {
    const type = reportModel.dimensions[dimension].type;
    const fill = type === "hour" ? Fill.Hour : type === "string" ? Fill.Code : Fill.Integer;
    fromModel.set(columnOf(dimension), { fill, field: dimension });
  }
  for (const counter of reportModel.counters) fromModel.set(counter.name, { fill: counter.type === "count" ? Fill.Count : Fill.Money, field: counter.name });
  const missing = [...fromModel.keys()].filter((name) => !names.includes(name));
  const unknown = names.filter((name) => !fromModel.has(name));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(`${table} does not match the report model (missing ${missing.join(", ") || "nothing"}; unknown ${unknown.join(", ") || "nothing"}): a dimension without its migration?`);
  }
  return names.map((name) => fromModel.get(name)!);
}

/** How many facts of each side one load wrote. */
export type IngestCounts = Record<Side, number>;

/** Facts per block when they are encoded on this thread: one data chunk. */
const IN_THREAD_BLOCK = CHUNK_ROWS;

function isAsync<T>(items: Iterable<T> | AsyncIterable<T>): items is AsyncIterable<T> {
  return typeof (items as AsyncIterable<T>)[Symbol.asyncIterator] === "function";
}

/**
 * Checks and encodes facts given as objects, here, a block at a time, handing each full block to
 * `append` (which is done with it when it returns). Facts already in this thread's memory (the
 * exchange's flush, a caller's array) cost as much to send to a worker as to encode here.
 */
async function encodeHere(facts: Iterable<Fact> | AsyncIterable<Fact>, append: (block: FactBlock) => Promise<void> | undefined): Promise<void> {
  const encoder = new FactBlockEncoder(IN_THREAD_BLOCK);
  encoder.start();
  let position = 0;
  const add = (fact: Fact): Promise<void> | undefined => {
    position++;
    const problem = encoder.add(fact);
    if (problem) throw new FactError(position, problem);
    if (!encoder.full) return undefined;
    const block = encoder.take();
    const appended = append(block);
    encoder.start(block.buffer);
    return appended;
  };
  // A sync iterable is walked without awaiting each item: for-await costs a microtask per fact.
  if (isAsync(facts)) {
    for await (const fact of facts) await add(fact);
  } else {
    for (const fact of facts) {
      const appended = add(fact);
      if (appended) await appended;
    }
  }
  if (encoder.holdsFacts) await append(encoder.take());
}

/**
 * Makes DuckDB run on one thread while a source's facts are appended; returns what gives it its
 * threads back. In DuckDB 1.5 an Appender's flush runs as a query whose tasks DuckDB's other
 * threads take, while the appending thread polls for them in a loop: on two cores, beside the
 * load's worker, that poll cost 3–6 s of 11–20 s of CPU for 11 M facts (load 6–9; 245–582k →
 * 767–902k facts/s, docs/benchmarks.md). The setting is the whole instance's, so only loads from a
 * source change it: `adxkit seed`, `adxkit ingest` and the demo's load, each in a process of its
 * own before anything serves reports (a server's flushes are facts given as objects).
 */
async function appendOnOneThread(connection: DuckDBConnection): Promise<() => Promise<void>> {
  const [[setting]] = (await connection.runAndReadAll("SELECT current_setting('threads')")).getRowsJS();
  const threads = Number(setting);
  if (!Number.isInteger(threads) || threads <= 1) return async () => undefined;
  await connection.run("SET threads = 1");
  let restored = false;
  return async () => {
    if (restored) return;
    restored = true;
    await connection.run(`SET threads = ${threads}`);
  };
}

/**
 * Loads facts in one transaction on `connection`; all-or-nothing, the exchange's checkpoint and
 * billing tokens (`options`) included. Facts given as objects are encoded on this thread; a
 * source (seed, NDJSON) is read on a worker thread while this one appends. An invalid fact
 * throws a `FactError` with its 1-based position (a source's: its line), and a bad line of an
 * NDJSON source goes to its `onBadLine` first. The caller serialises loads (the dictionaries
 * are shared). `beforeCommit` runs last in the transaction (the store reads the rollups' record).
 */
export async function ingestFacts(
  connection: DuckDBConnection,
  dictionaries: Dictionaries,
  layout: Map<Side, Column[]>,
  facts: FactInput,
  options: IngestOptions = {},
  sweepExpiredTokens = false,
  beforeCommit?: (connection: DuckDBConnection) => Promise<void>,
): Promise<IngestCounts> {
  const all: Dictionary[] = [...dictionaries.values()];
  const writers: SideWriter[] = [];
  // Started first: the worker loads its modules and reads while the transaction opens.
  const thread = isFactSource(facts) ? new FactBlockThread(facts) : undefined;
  try {
    registerRowScan(connection);
    await connection.run("BEGIN TRANSACTION");
  } catch (error) {
    await thread?.close();
    throw error;
  }
  let restoreThreads: (() => Promise<void>) | undefined;
  try {
    if (thread) restoreThreads = await appendOnOneThread(connection);
    for (const dictionary of all) await dictionary.sync(connection);
    const [[batchValue]] = (await connection.runAndReadAll("SELECT nextval('ingest_batch_seq')")).getRowsJS();
    const batch = Number(batchValue);
    const layoutOfBlocks = blockLayout(2);
    const targets = {} as Record<Side, SideWriter>;
    for (const side of SIDES) {
      let columns = layout.get(side);
      if (!columns) layout.set(side, (columns = await hourlyColumns(connection, side)));
      const table = `${side}_hourly`;
      targets[side] = new SideWriter(table, side, columns, layoutOfBlocks, batch, thread ? await connection.createAppender(table) : undefined);
      writers.push(targets[side]);
    }
    const counts = Object.fromEntries(SIDES.map((side) => [side, 0])) as IngestCounts;
    const codes = new LoadCodes(dictionaries);
    /** Sides holding too many chunks: inserted one after the other (a connection runs one statement at a time). */
    const overflow = async (due: SideWriter[]): Promise<void> => {
      for (const writer of due) await writer.overflow(connection);
    };
    const append = (block: FactBlock): Promise<void> | undefined => {
      codes.learn(block);
      const due: SideWriter[] = [];
      for (const side of SIDES) {
        if (block.rows[side] === 0) continue;
        if (targets[side].append(block, codes)) due.push(targets[side]);
        counts[side] += block.rows[side];
      }
      return due.length > 0 ? overflow(due) : undefined;
    };
    if (thread) {
      // Appended to Appenders: nothing is held, nothing to wait for.
      for await (const block of thread.blocks()) {
        append(block);
        thread.release(block);
      }
    } else await encodeHere(facts as Iterable<Fact> | AsyncIterable<Fact>, append);

    for (const writer of writers) await writer.finish(connection);
    writers.length = 0;
    // The rollups after the appends are queries of their own: every thread again.
    await restoreThreads?.();
    for (const dictionary of all) await dictionary.write(connection);
    // One query for every rollup statement, the batch number written in (layout.ts batchLiteral).
    const rollups = SIDES.filter((side) => counts[side] > 0).flatMap((side) => [...rollupStatements(side, batch), recordPeriodsStatement(side, batch)]);
    if (rollups.length > 0) await connection.run(rollups.join(";\n"));
    if (SIDES.some((side) => counts[side] > 0)) {
      await connection.run(
        "INSERT INTO ingest_batches VALUES ($1, $2, $3, $4)",
        [batch, timestampValue(BigInt(Date.now()) * 1000n), BigInt(counts.supply ?? 0), BigInt(counts.demand ?? 0)],
        [INTEGER, TIMESTAMP, BIGINT, BIGINT],
      );
    }
    if (options.checkpoint || options.billingTokens || sweepExpiredTokens) await writeRecovery(connection, options, sweepExpiredTokens);
    await beforeCommit?.(connection);
    await connection.run("COMMIT");
    for (const dictionary of all) dictionary.commit();
    return counts;
  } catch (error) {
    for (const writer of writers) writer.abandon();
    for (const dictionary of all) dictionary.rollback();
    await connection.run("ROLLBACK").catch(() => undefined);
    await restoreThreads?.().catch(() => undefined);
    throw error;
  } finally {
    await thread?.close();
  }
}
