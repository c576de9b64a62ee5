/**
 * Loading facts into ClickHouse, as TabSeparated text (the server parses it several times faster
 * than JSON rows). ClickHouse has no transactions, so a large load is staged: its rows stream, in
 * one INSERT per side, into `*_staging` under a fresh load id (the partition key); only when every
 * fact has checked out and the source has ended are they copied, server-side, into `*_hourly`
 * (whose materialized views fill the rollups). A bad fact or a failing source drops the load's
 * staging partitions, so nothing of it is ever visible to reports. A load small enough to hold
 * in memory (`chunkRows` per side) goes straight into `*_hourly`, one INSERT per side.
 */
import { randomInt } from "node:crypto";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import { reportModel, type Side } from "@adxkit/bindings/reports";
import { FactError } from "../errors.js";
import { factProblem } from "../fact.js";
import type { Fact } from "../store.js";
import type { ClickHouseConnection } from "./connection.js";
import { hourlyColumns } from "./layout.js";

/** The last whole hour a ClickHouse DateTime (UInt32 seconds) holds: 2106-02-07T05:00:00. */
const MAX_HOUR_TEXT = "2106-02-07T05:00:00";
/** Text handed to a stream at once: large enough that a write costs little per fact. */
const CHUNK_CHARS = 1 << 20;

function isAsync<T>(items: Iterable<T> | AsyncIterable<T>): items is AsyncIterable<T> {
  return typeof (items as AsyncIterable<T>)[Symbol.asyncIterator] === "function";
}

/** A load id: unique enough across stores and processes, and a safe integer (JS and UInt64 agree). */
function newBatchId(): number {
  return Date.now() * 1000 + randomInt(1000);
}

const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };
/** A string as a TabSeparated field: backslash, tab and line breaks escaped, the rest verbatim. */
export const tsvText = (value: string) => (/[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c]) : value);

/** How a side's facts become TSV lines (after `prefix`): its columns, and for each whether it is text. */
export function lineWriter(side: Side): { columns: string[]; line: (fact: Fact, prefix: string) => string } {
  const columns = hourlyColumns(side);
  const hourField = reportModel.sides[side].key[0];
  const fields = columns.slice(1);
  const text = fields.map((name) => reportModel.dimensions[name]?.type === "string");
  return {
    columns,
    line: (fact, prefix) => {
      const record = fact as unknown as Record<string, string | number>;
      // `YYYY-MM-DDThh:00:00` → `YYYY-MM-DD hh:00:00`, read in the column's time zone, UTC.
      let out = `${prefix}${(record[hourField] as string).replace("T", " ")}`;
      for (let i = 0; i < fields.length; i++) out += `\t${text[i] ? tsvText(record[fields[i]] as string) : record[fields[i]]}`;
      return `${out}\n`;
    },
  };
}

/** One side of a load: lines held in memory, or streamed into staging once it is large. */
class SideLoad {
  private held: string[] = [];
  private pending = "";
  private stream?: PassThrough;
  private inserted?: Promise<unknown>;
  count = 0;

  constructor(
    private readonly connection: ClickHouseConnection,
    readonly side: Side,
    readonly columns: string[],
  ) {}

  /** Adds a line; returns a promise only when the stream asks to wait. */
  add(line: string): Promise<void> | undefined {
    this.count++;
    if (!this.stream) {
      this.held.push(line);
      return undefined;
    }
    this.pending += line;
    return this.pending.length >= CHUNK_CHARS ? this.write() : undefined;
  }

  get size(): number {
    return this.held.length;
  }

  get streaming(): boolean {
    return this.stream !== undefined;
  }

  /** Starts the staging INSERT (every held line gets the load id) and streams from now on. */
  stage(batch: number): void {
    const stream = new PassThrough();
    // Destroyed when the load fails: the error ends the INSERT, and is ours to ignore here.
    stream.on("error", () => undefined);
    this.stream = stream;
    this.inserted = this.connection.client.insert({ table: this.connection.table(`${this.side}_staging`), values: stream, format: "TabSeparated", columns: ["batch", ...this.columns] as [string, ...string[]] });
    // A failed INSERT surfaces at finish; until then the stream must not throw unhandled.
    this.inserted.catch(() => undefined);
    this.pending = this.held.map((l) => `${batch}\t${l}`).join("");
    this.held = [];
  }

  private async write(): Promise<void> {
    const chunk = this.pending;
    this.pending = "";
    if (!this.stream!.write(chunk)) await Promise.race([once(this.stream!, "drain"), this.inserted]);
  }

  /** Ends the load of this side: the held lines in one INSERT into `*_hourly`, or the stream ended. */
  async finish(): Promise<void> {
    if (!this.stream) {
      if (this.held.length > 0) await this.insertText(`${this.side}_hourly`, this.held.join(""));
      return;
    }
    if (this.pending) await this.write();
    this.stream.end();
    await this.inserted;
  }

  /** Stops a streaming INSERT (the load failed). */
  async abort(): Promise<void> {
    this.held = [];
    if (!this.stream) return;
    this.stream.destroy(new Error("load abandoned"));
    await this.inserted?.catch(() => undefined);
  }

  private async insertText(table: string, text: string): Promise<void> {
    const stream = new PassThrough();
    stream.end(text);
    await this.connection.client.insert({ table: this.connection.table(table), values: stream, format: "TabSeparated", columns: this.columns as [string, ...string[]] });
  }
}

/** Loads facts; all-or-nothing against bad facts and failing sources. Returns the count per side. */
export async function ingestClickHouse(connection: ClickHouseConnection, facts: Iterable<Fact> | AsyncIterable<Fact>): Promise<Record<Side, number>> {
  const batch = newBatchId();
  const sides = Object.keys(reportModel.sides) as Side[];
  const writers = Object.fromEntries(sides.map((side) => [side, lineWriter(side)])) as Record<Side, ReturnType<typeof lineWriter>>;
  const loads = Object.fromEntries(sides.map((side) => [side, new SideLoad(connection, side, writers[side].columns)])) as Record<Side, SideLoad>;
  let prefix = "";
  let position = 0;

  // Returns a promise only when a stream asks to wait, so the common case stays synchronous.
  const add = (fact: Fact): Promise<void> | undefined => {
    position++;
    const problem = factProblem(fact);
    if (problem) throw new FactError(position, problem);
    // DateTime holds seconds up to 2106-02-07; the facts' checks accept years to 9999, ClickHouse cannot.
    if (fact.date_hour > MAX_HOUR_TEXT) throw new FactError(position, 'field "date_hour" is after 2106, beyond ClickHouse DateTime');
    const load = loads[fact.side];
    const waited = load.add(writers[fact.side].line(fact, prefix));
    if (!load.streaming && load.size >= connection.chunkRows) {
      // Large: every side streams into staging from now on, lines prefixed with the load id.
      for (const side of sides) loads[side].stage(batch);
      prefix = `${batch}\t`;
    }
    return waited;
  };

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
  } catch (error) {
    for (const side of sides) await loads[side].abort();
    if (loads[sides[0]].streaming) await dropBatch(connection, sides, batch);
    throw error;
  }

  if (loads[sides[0]].streaming) {
    try {
      // batch is our own safe integer, never input: a literal on every server.
      for (const side of sides) {
        if (loads[side].count === 0) continue;
        const columns = writers[side].columns.join(", ");
        await connection.command(
          `INSERT INTO ${connection.table(`${side}_hourly`)} (${columns}) SELECT ${columns} FROM ${connection.table(`${side}_staging`)} WHERE batch = ${batch}`,
        );
      }
    } finally {
      await dropBatch(connection, sides, batch);
    }
  }
  return Object.fromEntries(sides.map((side) => [side, loads[side].count])) as Record<Side, number>;
}

/** Drops a load's staging partitions (there is one per side at most). */
async function dropBatch(connection: ClickHouseConnection, sides: readonly Side[], batch: number): Promise<void> {
  for (const side of sides) {
    await connection.command(`ALTER TABLE ${connection.table(`${side}_staging`)} DROP PARTITION ${batch}`).catch(() => undefined);
  }
}
