/**
 * Facts as ClickHouse RowBinary, the format the server reads fastest (about 1.7× TabSeparated
 * on 18.16 here, docs/benchmarks.md): each column in table order, little-endian, strings as
 * LEB128 length + UTF-8. Written by hand: @clickhouse/client sends RowBinary bytes it is given
 * (`exec` with a byte stream) but encodes only JSON; its TabSeparated path cost a load's
 * client 6 s of CPU per million facts (18 % in the garbage collector), this one a tenth of it.
 * Rows go into large buffers allocated once per MiB; a row may straddle two (the body is one
 * byte stream).
 */
import { reportModel, type Side } from "@adxkit/bindings/reports";
import type { Fact } from "../store.js";
import { hourlyColumns } from "./layout.js";

/** Bytes per buffer: large, so a write to the request stream costs little per fact. */
const CHUNK_BYTES = 1 << 20;
/** The first buffer's bytes: small, as most loads (an exchange's flush) are. */
const FIRST_BYTES = 1 << 16;
const TWO_TO_32 = 2 ** 32;

const Kind = { Hour: 0, Text: 1, Code: 2, Count: 3, Money: 4 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

/** The kind of each hourly column: DateTime, String, UInt32, UInt64 or Float64 (layout.ts). */
function columnKinds(side: Side): { fields: string[]; kinds: Kind[] } {
  const fields = [reportModel.sides[side].key[0], ...hourlyColumns(side).slice(1)];
  const kinds = fields.map((name, i): Kind => {
    if (i === 0) return Kind.Hour;
    const counter = reportModel.counters.find((c) => c.name === name);
    if (counter) return counter.type === "count" ? Kind.Count : Kind.Money;
    return reportModel.dimensions[name].type === "string" ? Kind.Text : Kind.Code;
  });
  return { fields, kinds };
}

/** One side's facts (and, for billed impressions, a trailing token id) as RowBinary bytes. */
export class RowBinaryRows {
  /** The table's columns the bytes fill, in order. */
  readonly columns: string[];
  private readonly fields: string[];
  private readonly kinds: Kind[];
  private buffer = Buffer.allocUnsafe(FIRST_BYTES);
  private view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.length);
  private position = 0;
  private ready: Buffer[] = [];
  /** Seconds since the epoch of each `date_hour` seen. */
  private readonly hours = new Map<string, number>();
  /** Rows written. */
  rows = 0;

  constructor(
    readonly side: Side,
    private readonly withToken = false,
  ) {
    const { fields, kinds } = columnKinds(side);
    this.fields = fields;
    this.kinds = kinds;
    this.columns = hourlyColumns(side).concat(withToken ? ["token_id"] : []);
  }

  /** Appends a fact (checked by the caller) as a row. */
  add(fact: Fact, token?: string): void {
    const record = fact as unknown as Record<string, string | number>;
    const { fields, kinds } = this;
    for (let i = 0; i < fields.length; i++) {
      const value = record[fields[i]];
      switch (kinds[i]) {
        case Kind.Hour:
          this.uint32(this.hourSeconds(value as string));
          break;
        case Kind.Text:
          this.text(value as string);
          break;
        case Kind.Code:
          this.uint32(value as number);
          break;
        case Kind.Count:
          // A safe integer as two 32-bit halves: exact up to 2^53.
          this.ensure(8);
          this.view.setUint32(this.position, (value as number) >>> 0, true);
          this.view.setUint32(this.position + 4, Math.floor((value as number) / TWO_TO_32), true);
          this.position += 8;
          break;
        default:
          this.ensure(8);
          this.view.setFloat64(this.position, value as number, true);
          this.position += 8;
      }
    }
    if (this.withToken) this.text(token ?? "");
    this.rows++;
  }

  /** The buffers filled completely so far (each handed out once). */
  takeFull(): Buffer[] {
    const full = this.ready;
    this.ready = [];
    return full;
  }

  /** Every byte not handed out yet; the rows start over. */
  takeAll(): Buffer[] {
    if (this.position > 0) {
      this.ready.push(this.buffer.subarray(0, this.position));
      this.buffer = this.buffer.subarray(this.position);
      this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.length);
      this.position = 0;
    }
    return this.takeFull();
  }

  private hourSeconds(dateHour: string): number {
    let seconds = this.hours.get(dateHour);
    if (seconds === undefined) {
      seconds = Date.parse(`${dateHour}Z`) / 1000;
      this.hours.set(dateHour, seconds);
    }
    return seconds;
  }

  private uint32(value: number): void {
    this.ensure(4);
    this.view.setUint32(this.position, value, true);
    this.position += 4;
  }

  private text(value: string): void {
    const length = value.length;
    // Most identifiers are short ASCII: their bytes are their char codes, the length one byte.
    if (length < 128) {
      this.ensure(length + 1);
      const buffer = this.buffer;
      const start = this.position + 1;
      let i = 0;
      for (; i < length; i++) {
        const code = value.charCodeAt(i);
        if (code >= 128) break;
        buffer[start + i] = code;
      }
      if (i === length) {
        buffer[this.position] = length;
        this.position = start + length;
        return;
      }
    }
    const bytes = Buffer.byteLength(value, "utf8");
    this.ensure(bytes + 5);
    let n = bytes;
    while (n >= 0x80) {
      this.buffer[this.position++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buffer[this.position++] = n;
    this.position += this.buffer.write(value, this.position, "utf8");
  }

  private ensure(bytes: number): void {
    if (this.position + bytes > this.buffer.length) this.rotate(Math.max(CHUNK_BYTES, bytes));
  }

  private rotate(size: number): void {
    if (this.position > 0) this.ready.push(this.buffer.subarray(0, this.position));
    this.buffer = Buffer.allocUnsafe(size);
    this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.length);
    this.position = 0;
  }
}
