/**
 * The string dictionaries (`dim_*`): each identifier is stored once with an integer code, and
 * fact rows carry the code. Codes are assigned in memory during a load and written with it;
 * a rolled-back load forgets the codes it made.
 */
import { INTEGER, LIST, VARCHAR, listValue, type DuckDBConnection } from "@duckdb/node-api";
import { dictionaryDimensions, dictionaryOf } from "./layout.js";

/** A dictionary table (`dim_<stem>`, named by layout.ts from the model, never from input). */
export type DictionaryTable = string;

/** One dictionary table, cached in memory. Only one load at a time may use it (the store serialises loads). */
export class Dictionary {
  private codes = new Map<string, number>();
  private next = 0;
  private pending: string[] = [];
  private loaded = false;

  constructor(readonly table: DictionaryTable) {}

  /**
   * Makes the cache match the table, reloading when someone else (another store on the same
   * file, a person with a SQL prompt) added entries. Call inside the load's transaction.
   */
  async sync(connection: DuckDBConnection): Promise<void> {
    const [[count, next]] = (await connection.runAndReadAll(`SELECT count(*), COALESCE(max(code) + 1, 0) FROM ${this.table}`)).getRowsJS();
    if (this.loaded && Number(count) === this.codes.size && Number(next) === this.next) return;
    const rows = (await connection.runAndReadAll(`SELECT code, value FROM ${this.table}`)).getRowsJS();
    this.codes = new Map(rows.map(([code, value]) => [value as string, Number(code)]));
    this.next = Number(next);
    this.pending = [];
    this.loaded = true;
  }

  /**
   * Whether the table holds `value`, as this cache knows between loads; undefined when it cannot
   * tell (never synced, or a load's codes neither committed nor rolled back).
   */
  holds(value: string): boolean | undefined {
    return this.loaded && this.pending.length === 0 ? this.codes.has(value) : undefined;
  }

  /** The code of a value, assigning a new one when the value is new. */
  code(value: string): number {
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.next++;
      this.codes.set(value, code);
      this.pending.push(value);
    }
    return code;
  }

  /** Inserts the values coded since the last commit; part of the load's transaction. */
  async write(connection: DuckDBConnection): Promise<void> {
    if (this.pending.length === 0) return;
    const first = this.next - this.pending.length;
    await connection.run(
      `INSERT INTO ${this.table} (code, value) SELECT unnest($1), unnest($2)`,
      [listValue(this.pending.map((_, i) => first + i)), listValue(this.pending)],
      [LIST(INTEGER), LIST(VARCHAR)],
    );
  }

  /** The load committed: its new codes are now in the table. */
  commit(): void {
    this.pending = [];
  }

  /** The load rolled back: forget the codes it assigned. */
  rollback(): void {
    for (const value of this.pending) this.codes.delete(value);
    this.next -= this.pending.length;
    this.pending = [];
  }
}

/** The dictionaries of one store, by dimension name. */
export type Dictionaries = ReadonlyMap<string, Dictionary>;

/** Empty caches for a freshly opened store (one per string dimension of the model); they load on first use. */
export function createDictionaries(): Dictionaries {
  return new Map(dictionaryDimensions().map((dimension) => [dimension, new Dictionary(dictionaryOf(dimension))]));
}
