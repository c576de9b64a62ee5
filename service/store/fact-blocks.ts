/**
 * Facts as columnar blocks: what a load's worker thread (fact-block-worker.ts) hands the thread
 * that appends them, and what the in-thread path fills too, so both append the same way. A block
 * is one ArrayBuffer (transferred between threads, never copied) holding, per side, one column
 * per field of FACT_FIELDS (generated from the report model), each field held as its model type
 * says: an hour as microseconds since the epoch and a count as 64-bit integers (two 32-bit
 * words, little-endian), a code as a 32-bit integer, money as a double, and a string as a 32-bit
 * code of the load's own (`LoadCode`), the block listing the strings it coded first.
 */
import { FACT_FIELDS, factFields, factProblem, reportModel, type Fact, type Side } from "@adxkit/bindings/reports";

/** How a field is held in a block. */
export const Held = { Hour: 0, Text: 1, Code: 2, Count: 3, Money: 4 } as const;
export type Held = (typeof Held)[keyof typeof Held];

/** One field's column in a block. */
export interface BlockColumn {
  field: string;
  held: Held;
  /** Where the column starts in the block's buffer; row r is at byteOffset + r × bytesPerRow. */
  byteOffset: number;
  bytesPerRow: 4 | 8;
}

/** Where each side's columns are in a block of `capacity` facts. */
export interface BlockLayout {
  capacity: number;
  byteLength: number;
  sides: Record<Side, BlockColumn[]>;
}

/** A block of facts, as it crosses between threads. */
export interface FactBlock {
  buffer: ArrayBuffer;
  /** The facts it has room for: its layout is `blockLayout(capacity)`. */
  capacity: number;
  /** Rows of each side in it (rows past these hold nothing meaningful). */
  rows: Record<Side, number>;
  /** Per string dimension, the strings this block coded first, in the order of their load codes. */
  newStrings: Record<string, string[]>;
}

export const SIDES = Object.keys(reportModel.sides) as Side[];

function heldOf(field: string): Held {
  const dimension = reportModel.dimensions[field];
  if (dimension) return dimension.type === "hour" ? Held.Hour : dimension.type === "string" ? Held.Text : Held.Code;
  const counter = reportModel.counters.find((c) => c.name === field);
  if (!counter) throw new Error(`fact field ${field} is neither a dimension nor a counter of the report model`);
  return counter.type === "count" ? Held.Count : Held.Money;
}

/** The layout of a block of `capacity` facts (a multiple of 2, so every 8-byte column is aligned). */
export function blockLayout(capacity: number): BlockLayout {
  if (!Number.isInteger(capacity) || capacity <= 0 || capacity % 2 !== 0) throw new RangeError("a block's capacity is a positive even integer");
  let byteOffset = 0;
  const sides = {} as Record<Side, BlockColumn[]>;
  for (const side of SIDES) {
    sides[side] = FACT_FIELDS[side].map((field) => {
      const held = heldOf(field);
      const bytesPerRow = held === Held.Text || held === Held.Code ? 4 : 8;
      const column = { field, held, byteOffset, bytesPerRow } as const;
      byteOffset += capacity * bytesPerRow;
      return column;
    });
  }
  return { capacity, byteLength: byteOffset, sides };
}

const TWO_TO_32 = 2 ** 32;

/**
 * A side's columns as typed arrays over a block's buffer, grouped by how each is written, each
 * with the place of its field in factFields' output: a row is written with no switch per column
 * (loops over plain arrays; the worker's time per fact is what a load waits for).
 */
class SideWriter {
  private readonly hourWords: Int32Array[] = [];
  private readonly hourAt: number[] = [];
  private readonly textWords: Int32Array[] = [];
  private readonly textAt: number[] = [];
  private readonly textCodes: Map<string, number>[] = [];
  private readonly textFresh: string[][] = [];
  private readonly codeWords: Int32Array[] = [];
  private readonly codeAt: number[] = [];
  private readonly countWords: Int32Array[] = [];
  private readonly countAt: number[] = [];
  private readonly moneyValues: Float64Array[] = [];
  private readonly moneyAt: number[] = [];
  rows = 0;

  constructor(
    buffer: ArrayBuffer,
    columns: readonly BlockColumn[],
    capacity: number,
    loadCodes: ReadonlyMap<string, Map<string, number>>,
    newStrings: Record<string, string[]>,
    private readonly hourCache: HourCache,
  ) {
    columns.forEach((column, at) => {
      if (column.held === Held.Money) {
        this.moneyValues.push(new Float64Array(buffer, column.byteOffset, capacity));
        this.moneyAt.push(at);
        return;
      }
      const words = new Int32Array(buffer, column.byteOffset, (capacity * column.bytesPerRow) / 4);
      if (column.held === Held.Hour) {
        this.hourWords.push(words);
        this.hourAt.push(at);
      } else if (column.held === Held.Code) {
        this.codeWords.push(words);
        this.codeAt.push(at);
      } else if (column.held === Held.Count) {
        this.countWords.push(words);
        this.countAt.push(at);
      } else {
        this.textWords.push(words);
        this.textAt.push(at);
        this.textCodes.push(loadCodes.get(column.field)!);
        this.textFresh.push((newStrings[column.field] ??= []));
      }
    });
  }

  /** Writes one checked fact's fields (`values`, in FACT_FIELDS order) as the next row. */
  write(values: readonly (string | number)[]): void {
    const row = this.rows++;
    for (let i = 0; i < this.hourAt.length; i++) writeInt64(this.hourWords[i], row, this.hourCache.micros(values[this.hourAt[i]] as string));
    for (let i = 0; i < this.textAt.length; i++) {
      const text = values[this.textAt[i]] as string;
      const codes = this.textCodes[i];
      let code = codes.get(text);
      if (code === undefined) {
        code = codes.size;
        codes.set(text, code);
        this.textFresh[i].push(text);
      }
      this.textWords[i][row] = code;
    }
    for (let i = 0; i < this.codeAt.length; i++) this.codeWords[i][row] = values[this.codeAt[i]] as number;
    for (let i = 0; i < this.countAt.length; i++) writeInt64(this.countWords[i], row, values[this.countAt[i]] as number);
    for (let i = 0; i < this.moneyAt.length; i++) this.moneyValues[i][row] = values[this.moneyAt[i]] as number;
  }
}

/** A safe integer as two little-endian 32-bit halves: exact for every safe integer. */
function writeInt64(words: Int32Array, row: number, value: number): void {
  words[2 * row] = value >>> 0;
  words[2 * row + 1] = Math.floor(value / TWO_TO_32);
}

/** `date_hour` strings as microseconds since the epoch, once per distinct hour. */
class HourCache {
  private readonly values = new Map<string, number>();
  /** Facts mostly come hour by hour: the last hour is checked before the map. */
  private last = "";
  private lastValue = 0;
  micros(dateHour: string): number {
    if (dateHour === this.last) return this.lastValue;
    let value = this.values.get(dateHour);
    if (value === undefined) {
      value = Date.parse(`${dateHour}Z`) * 1000;
      this.values.set(dateHour, value);
    }
    this.last = dateHour;
    this.lastValue = value;
    return value;
  }
}

/**
 * Checks facts and writes them into blocks. A string's load code is its place among the strings
 * of its dimension this load has seen: the same in every block of the load, so the thread that
 * appends maps each code to the store's once, from the blocks' `newStrings`.
 */
export class FactBlockEncoder {
  readonly layout: BlockLayout;
  private readonly loadCodes = new Map<string, Map<string, number>>();
  private readonly hourCache = new HourCache();
  private readonly values: (string | number)[] = [];
  private block: FactBlock | undefined;
  private writers = {} as Record<Side, SideWriter>;
  private facts = 0;

  constructor(capacity: number) {
    this.layout = blockLayout(capacity);
    for (const side of SIDES) for (const column of this.layout.sides[side]) if (column.held === Held.Text) this.loadCodes.set(column.field, new Map());
  }

  /** Starts a block in `buffer` (one handed back, its old rows overwritten) or a new one. */
  start(buffer: ArrayBuffer = new ArrayBuffer(this.layout.byteLength)): void {
    if (buffer.byteLength !== this.layout.byteLength) throw new RangeError("a block's buffer has the wrong size");
    const block: FactBlock = { buffer, capacity: this.layout.capacity, rows: {} as Record<Side, number>, newStrings: {} };
    for (const side of SIDES) this.writers[side] = new SideWriter(buffer, this.layout.sides[side], this.layout.capacity, this.loadCodes, block.newStrings, this.hourCache);
    this.block = block;
    this.facts = 0;
  }

  /** Whether a block is started and holds facts. */
  get holdsFacts(): boolean {
    return this.facts > 0;
  }

  /** Whether the started block is full (`take` it before the next `add`). */
  get full(): boolean {
    return this.facts === this.layout.capacity;
  }

  /** Checks a fact and writes it into the started block; returns why it is refused instead, writing nothing. */
  add(fact: Fact): string | undefined {
    const problem = factProblem(fact);
    if (problem) return problem;
    factFields(fact, this.values);
    this.writers[fact.side].write(this.values);
    this.facts++;
    return undefined;
  }

  /** The block filled so far; start another before adding more. */
  take(): FactBlock {
    const block = this.block;
    if (!block) throw new Error("no block started");
    for (const side of SIDES) block.rows[side] = this.writers[side].rows;
    this.block = undefined;
    return block;
  }
}
