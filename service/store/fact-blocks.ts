/**
 * Facts as columnar blocks: what a load's worker thread (fact-block-worker.ts) hands the thread
 * that appends them, and what the in-thread path fills too, so both append the same way. A block
 * is one ArrayBuffer (transferred between threads, never copied) holding, per side, one column
 * per field of FACT_FIELDS (generated from the report model), each field held as its model type
 * says: an hour as microseconds since the epoch and a count as 64-bit integers (two 32-bit
 * words, little-endian), a code as a 32-bit integer, money as a double, and a string as a 32-bit
 * code of the load's own (`LoadCode`), the block listing the strings it coded first.
 */
import { FACT_FIELD_BYTES, FACT_FIELDS, factProblem, reportModel, writeFactRow, type Fact, type FactCoders, type FactColumns, type Side, type TextDimension } from "@adxkit/bindings/reports";

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
    sides[side] = FACT_FIELDS[side].map((field, at) => {
      const bytesPerRow = FACT_FIELD_BYTES[side][at];
      const column = { field, held: heldOf(field), byteOffset, bytesPerRow } as const;
      byteOffset += capacity * bytesPerRow;
      return column;
    });
  }
  return { capacity, byteLength: byteOffset, sides };
}

/** A block's columns as typed arrays over its buffer, as writeFactRow (generated) takes them. */
function columnsOf(buffer: ArrayBuffer, layout: BlockLayout): FactColumns {
  const columns = {} as Record<Side, Record<string, Int32Array | Float64Array>>;
  for (const side of SIDES) {
    columns[side] = {};
    for (const { field, held, byteOffset, bytesPerRow } of layout.sides[side]) {
      columns[side][field] = held === Held.Money ? new Float64Array(buffer, byteOffset, layout.capacity) : new Int32Array(buffer, byteOffset, (layout.capacity * bytesPerRow) / 4);
    }
  }
  return columns as unknown as FactColumns;
}

/** A string dimension's load codes: a string's place among those of the dimension the load has seen. */
class LoadStrings {
  private readonly codes = new Map<string, number>();
  /** The strings the current block coded first (its `newStrings` entry). */
  fresh: string[] = [];

  /** The last string coded and its code: consecutive facts often share a string, and a comparison costs a fraction of a lookup. */
  private last: string | undefined;
  private lastCode = -1;

  code(text: string): number {
    if (text === this.last) return this.lastCode;
    let code = this.codes.get(text);
    if (code === undefined) {
      code = this.codes.size;
      this.codes.set(text, code);
      this.fresh.push(text);
    }
    this.last = text;
    this.lastCode = code;
    return code;
  }
}

/** `date_hour` strings as microseconds since the epoch, once per distinct hour. */
class HourCache {
  private readonly values = new Map<string, number>();
  /** Facts mostly come hour by hour: the last hour is checked before the map. */
  private last: string | undefined;
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
  private readonly coders: FactCoders = { hour: new HourCache(), text: {} as Record<TextDimension, LoadStrings> };
  private block: FactBlock | undefined;
  private columns: FactColumns | undefined;
  private rows = {} as Record<Side, number>;
  private facts = 0;

  constructor(capacity: number) {
    this.layout = blockLayout(capacity);
    for (const side of SIDES) for (const column of this.layout.sides[side]) if (column.held === Held.Text) this.coders.text[column.field as TextDimension] = new LoadStrings();
  }

  /** Starts a block in `buffer` (one handed back, its old rows overwritten) or a new one. */
  start(buffer: ArrayBuffer = new ArrayBuffer(this.layout.byteLength)): void {
    if (buffer.byteLength !== this.layout.byteLength) throw new RangeError("a block's buffer has the wrong size");
    const block: FactBlock = { buffer, capacity: this.layout.capacity, rows: {} as Record<Side, number>, newStrings: {} };
    for (const [dimension, strings] of Object.entries(this.coders.text) as [TextDimension, LoadStrings][]) strings.fresh = block.newStrings[dimension] = [];
    for (const side of SIDES) this.rows[side] = 0;
    this.columns = columnsOf(buffer, this.layout);
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
    this.addChecked(fact);
    return undefined;
  }

  /** Writes a fact checked already (an NDJSON line's, by `factFromRecord`) into the started block. */
  addChecked(fact: Fact): void {
    writeFactRow(fact, this.columns!, this.rows, this.coders);
    this.facts++;
  }

  /** The block filled so far; start another before adding more. */
  take(): FactBlock {
    const block = this.block;
    if (!block) throw new Error("no block started");
    for (const side of SIDES) block.rows[side] = this.rows[side];
    this.block = undefined;
    return block;
  }
}
