/**
 * Loading facts into ClickHouse, as RowBinary (rowbinary.ts). A load small enough to hold in
 * memory (`chunkRows` facts per side: an exchange's flush) is checked completely, then written
 * with one INSERT per side straight into `*_hourly`, whose materialized views fill the rollups.
 * A larger one streams, one INSERT per side, into tables of its own, which are moved into the
 * store's only once every fact has checked out and the source has ended (load-tables.ts); a bad
 * fact or a failing source drops them, so nothing of a failed load is ever visible to reports.
 */
import { randomInt } from "node:crypto";
import { once } from "node:events";
import { PassThrough, Readable } from "node:stream";
import { reportModel, type Side } from "@adxkit/bindings/reports";
import { FactError } from "../errors.js";
import { factProblem } from "../fact.js";
import type { Fact } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";
import { LoadTables } from "./load-tables.js";
import { RowBinaryRows } from "./rowbinary.js";

/** The last whole hour a ClickHouse DateTime (UInt32 seconds) holds: 2106-02-07T05:00:00. */
const MAX_HOUR_TEXT = "2106-02-07T05:00:00";

function isAsync<T>(items: Iterable<T> | AsyncIterable<T>): items is AsyncIterable<T> {
  return typeof (items as AsyncIterable<T>)[Symbol.asyncIterator] === "function";
}

/** A load id: unique enough across stores and processes, and a safe integer (JS and UInt64 agree). */
function newBatchId(): number {
  return Date.now() * 1000 + randomInt(1000);
}

/** One side of a load: rows held in memory, or streamed into the load's own table once it is large. */
class SideLoad {
  readonly rows: RowBinaryRows;
  private stream?: PassThrough;
  private inserted?: Promise<void>;

  constructor(
    private readonly connection: ClickHouseConnection,
    readonly side: Side,
  ) {
    this.rows = new RowBinaryRows(side);
  }

  get count(): number {
    return this.rows.rows;
  }

  get streaming(): boolean {
    return this.stream !== undefined;
  }

  /** Starts the INSERT into the load's table; the rows held so far go first. */
  startStream(table: string): void {
    const stream = new PassThrough();
    // Destroyed when the load fails: the error ends the INSERT, and is ours to ignore here.
    stream.on("error", () => undefined);
    this.stream = stream;
    this.inserted = this.connection.insertRowBinary(table, this.rows.columns, stream);
    // A failed INSERT surfaces at finish; until then it must not be an unhandled rejection.
    this.inserted.catch(() => undefined);
  }

  /** Sends the filled buffers; returns a promise only when the stream asks to wait. */
  send(): Promise<void> | undefined {
    let waited: Promise<void> | undefined;
    for (const buffer of this.rows.takeFull()) {
      if (!this.stream!.write(buffer)) waited = this.drain();
    }
    return waited;
  }

  private async drain(): Promise<void> {
    await Promise.race([once(this.stream!, "drain"), this.inserted]);
  }

  /** Ends the load of this side: the held rows in one INSERT into `*_hourly`, or the stream ended. */
  async finish(): Promise<void> {
    const rest = this.rows.takeAll();
    if (!this.stream) {
      if (this.count > 0) await this.connection.insertRowBinary(`${this.side}_hourly`, this.rows.columns, Readable.from(rest, { objectMode: false }));
      return;
    }
    for (const buffer of rest) if (!this.stream.write(buffer)) await this.drain();
    this.stream.end();
    await this.inserted;
  }

  /** Stops a streaming INSERT (the load failed). */
  async abort(): Promise<void> {
    if (!this.stream) return;
    this.stream.destroy(new Error("load abandoned"));
    await this.inserted?.catch(() => undefined);
  }
}

/** Loads facts; all-or-nothing against bad facts and failing sources. Returns the count per side. */
export async function ingestClickHouse(connection: ClickHouseConnection, facts: Iterable<Fact> | AsyncIterable<Fact>): Promise<Record<Side, number>> {
  const sides = Object.keys(reportModel.sides) as Side[];
  const loads = Object.fromEntries(sides.map((side) => [side, new SideLoad(connection, side)])) as Record<Side, SideLoad>;
  const tables = new LoadTables(connection, newBatchId());
  let position = 0;

  /** Large: every side streams into the load's own tables from now on. */
  const stage = async (): Promise<void> => {
    await tables.create(sides);
    for (const side of sides) loads[side].startStream(tables.name(`${side}_hourly`));
  };

  // Returns a promise only when the load must wait, so the common case stays synchronous.
  const add = (fact: Fact): Promise<void> | undefined => {
    position++;
    const problem = factProblem(fact);
    if (problem) throw new FactError(position, problem);
    // DateTime holds seconds up to 2106-02-07; the facts' checks accept years to 9999, ClickHouse cannot.
    if (fact.date_hour > MAX_HOUR_TEXT) throw new FactError(position, 'field "date_hour" is after 2106, beyond ClickHouse DateTime');
    const load = loads[fact.side];
    load.rows.add(fact);
    if (load.streaming) return load.send();
    if (load.count >= connection.chunkRows) return stage();
    return undefined;
  };

  const staged = () => loads[sides[0]].streaming;
  try {
    if (isAsync(facts)) {
      for await (const fact of facts) await add(fact);
    } else {
      for (const fact of facts) {
        const waited = add(fact);
        if (waited) await waited;
      }
    }
    for (const side of sides) await loads[side].finish();
    if (staged()) await tables.publish(sides.filter((side) => loads[side].count > 0));
  } catch (error) {
    for (const side of sides) await loads[side].abort();
    throw error;
  } finally {
    await tables.drop();
  }
  return Object.fromEntries(sides.map((side) => [side, loads[side].count])) as Record<Side, number>;
}
