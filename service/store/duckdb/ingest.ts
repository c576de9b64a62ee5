/**
 * Loading facts: one transaction per call. Rows go through DuckDB's Appender a data chunk
 * (2,048 rows) at a time, as integer codes and numbers copied from typed arrays; at the end the
 * new dictionary entries and the load's daily rollup are written, then everything commits, or
 * nothing does.
 */
import {
  BIGINT,
  DOUBLE,
  INTEGER,
  TIMESTAMP,
  DuckDBDataChunk,
  DuckDBTimestampValue,
  timestampValue,
  type DuckDBAppender,
  type DuckDBBigIntVector,
  type DuckDBConnection,
  type DuckDBDoubleVector,
  type DuckDBIntegerVector,
  type DuckDBTimestampVector,
  type DuckDBType,
} from "@duckdb/node-api";
import { FactError } from "../errors.js";
import { factProblem } from "../fact.js";
import type { DemandFact, Fact, IngestOptions, SupplyFact } from "../store.js";
import type { Dictionaries, Dictionary } from "./dictionary.js";
import { writeRecovery } from "./recovery.js";

/** Column types of `supply_hourly` and `demand_hourly`, in table order. */
const SUPPLY_TYPES = [INTEGER, TIMESTAMP, INTEGER, INTEGER, INTEGER, INTEGER, INTEGER, INTEGER, BIGINT, BIGINT, BIGINT, DOUBLE];
const DEMAND_TYPES = [INTEGER, TIMESTAMP, INTEGER, INTEGER, INTEGER, BIGINT, BIGINT, BIGINT, DOUBLE];

// The rollups read only this load's rows (`batch`), sorted by day so day ranges skip row groups.
const SUPPLY_ROLLUP = `INSERT INTO supply_daily
  SELECT CAST(hour AS DATE) AS day, publisher_code, app_bundle_code, placement_code, ad_format, platform, country_code,
         SUM(request), SUM(response), SUM(impression), SUM(revenue)
  FROM supply_hourly WHERE batch = $1
  GROUP BY ALL ORDER BY day`;
const DEMAND_ROLLUP = `INSERT INTO demand_daily
  SELECT CAST(hour AS DATE) AS day, bidder_code, ad_format, platform, SUM(request), SUM(response), SUM(impression), SUM(revenue)
  FROM demand_hourly WHERE batch = $1
  GROUP BY ALL ORDER BY day`;

type Vector = DuckDBIntegerVector | DuckDBTimestampVector | DuckDBBigIntVector | DuckDBDoubleVector;

/** Fills data chunks row by row and hands each full one to an Appender. */
class ChunkAppender {
  /** DuckDB's standard vector size: the most rows a data chunk holds. */
  private readonly size = 2048;
  private readonly chunk: DuckDBDataChunk;
  private vectors: Vector[] = [];
  /** The row being written in the current chunk. */
  row = 0;

  constructor(
    private readonly appender: DuckDBAppender,
    private readonly types: readonly DuckDBType[],
  ) {
    this.chunk = DuckDBDataChunk.create(types, this.size);
    this.bindVectors();
  }

  // Vectors are views sized to the chunk's row count, so they are fetched again after each reset.
  private bindVectors(): void {
    this.vectors = this.types.map((_, column) => this.chunk.getColumnVector(column) as Vector);
  }

  int(column: number, value: number): void {
    (this.vectors[column] as DuckDBIntegerVector).setItem(this.row, value);
  }
  bigint(column: number, value: number): void {
    (this.vectors[column] as DuckDBBigIntVector).setItem(this.row, BigInt(value));
  }
  double(column: number, value: number): void {
    (this.vectors[column] as DuckDBDoubleVector).setItem(this.row, value);
  }
  timestamp(column: number, value: DuckDBTimestampValue): void {
    (this.vectors[column] as DuckDBTimestampVector).setItem(this.row, value);
  }

  endRow(): void {
    if (++this.row === this.size) this.flushChunk();
  }

  private flushChunk(): void {
    for (const vector of this.vectors) vector.flush();
    if (this.row < this.size) this.chunk.rowCount = this.row;
    this.appender.appendDataChunk(this.chunk);
    this.chunk.reset();
    this.chunk.rowCount = this.size;
    this.bindVectors();
    this.row = 0;
  }

  /** Appends the last partial chunk and closes the Appender (its rows join the transaction). */
  finish(): void {
    if (this.row > 0) this.flushChunk();
    this.appender.closeSync();
  }

  /** Drops whatever is buffered; used when the load fails. */
  abandon(): void {
    try {
      this.appender.clear();
      this.appender.closeSync();
    } catch {
      // The transaction is rolled back anyway; a failing close changes nothing.
    }
  }
}

/** Turns `date_hour` strings into timestamps once per distinct hour. */
class HourCache {
  private readonly values = new Map<string, DuckDBTimestampValue>();
  get(dateHour: string): DuckDBTimestampValue {
    let value = this.values.get(dateHour);
    if (value === undefined) {
      value = new DuckDBTimestampValue(BigInt(Date.parse(`${dateHour}Z`)) * 1000n);
      this.values.set(dateHour, value);
    }
    return value;
  }
}

function isAsync<T>(items: Iterable<T> | AsyncIterable<T>): items is AsyncIterable<T> {
  return typeof (items as AsyncIterable<T>)[Symbol.asyncIterator] === "function";
}

/** How many facts of each side one load wrote. */
export interface IngestCounts {
  supply: number;
  demand: number;
}

/**
 * Loads facts in one transaction on `connection`; all-or-nothing, the exchange's checkpoint and
 * billing tokens (`options`) included. An invalid fact throws a `FactError` with its 1-based
 * position. The caller serialises loads (the dictionaries are shared).
 */
export async function ingestFacts(
  connection: DuckDBConnection,
  dictionaries: Dictionaries,
  facts: Iterable<Fact> | AsyncIterable<Fact>,
  options: IngestOptions = {},
  sweepExpiredTokens = false,
): Promise<IngestCounts> {
  const all: Dictionary[] = Object.values(dictionaries);
  const appenders: ChunkAppender[] = [];
  await connection.run("BEGIN TRANSACTION");
  try {
    for (const dictionary of all) await dictionary.sync(connection);
    const [[batchValue]] = (await connection.runAndReadAll("SELECT nextval('ingest_batch_seq')")).getRowsJS();
    const batch = Number(batchValue);
    const supply = new ChunkAppender(await connection.createAppender("supply_hourly"), SUPPLY_TYPES);
    const demand = new ChunkAppender(await connection.createAppender("demand_hourly"), DEMAND_TYPES);
    appenders.push(supply, demand);
    const hours = new HourCache();
    const { publisher, appBundle, placement, country, bidder } = dictionaries;
    const counts: IngestCounts = { supply: 0, demand: 0 };
    let position = 0;

    const add = (fact: Fact): void => {
      position++;
      const problem = factProblem(fact);
      if (problem) throw new FactError(position, problem);
      if (fact.side === "supply") {
        const f = fact as SupplyFact;
        supply.int(0, batch);
        supply.timestamp(1, hours.get(f.date_hour));
        supply.int(2, publisher.code(f.publisher_id));
        supply.int(3, appBundle.code(f.app_bundle_id));
        supply.int(4, placement.code(f.placement_id));
        supply.int(5, f.ad_format);
        supply.int(6, f.platform);
        supply.int(7, country.code(f.country));
        supply.bigint(8, f.request);
        supply.bigint(9, f.response);
        supply.bigint(10, f.impression);
        supply.double(11, f.revenue);
        supply.endRow();
        counts.supply++;
      } else {
        const f = fact as DemandFact;
        demand.int(0, batch);
        demand.timestamp(1, hours.get(f.date_hour));
        demand.int(2, bidder.code(f.bidder_id));
        demand.int(3, f.ad_format);
        demand.int(4, f.platform);
        demand.bigint(5, f.request);
        demand.bigint(6, f.response);
        demand.bigint(7, f.impression);
        demand.double(8, f.revenue);
        demand.endRow();
        counts.demand++;
      }
    };
    // A sync iterable is walked without awaiting each item: for-await costs a microtask per fact.
    if (isAsync(facts)) for await (const fact of facts) add(fact);
    else for (const fact of facts) add(fact);

    supply.finish();
    demand.finish();
    appenders.length = 0;
    for (const dictionary of all) await dictionary.write(connection);
    if (counts.supply > 0) await connection.run(SUPPLY_ROLLUP, [batch], [INTEGER]);
    if (counts.demand > 0) await connection.run(DEMAND_ROLLUP, [batch], [INTEGER]);
    if (position > 0) {
      await connection.run(
        "INSERT INTO ingest_batches VALUES ($1, $2, $3, $4)",
        [batch, timestampValue(BigInt(Date.now()) * 1000n), BigInt(counts.supply), BigInt(counts.demand)],
        [INTEGER, TIMESTAMP, BIGINT, BIGINT],
      );
    }
    if (options.checkpoint || options.billingTokens || sweepExpiredTokens) await writeRecovery(connection, options, sweepExpiredTokens);
    await connection.run("COMMIT");
    for (const dictionary of all) dictionary.commit();
    return counts;
  } catch (error) {
    for (const appender of appenders) appender.abandon();
    for (const dictionary of all) dictionary.rollback();
    await connection.run("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
