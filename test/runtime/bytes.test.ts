// The runtime's byte writer and reader (runtime/bytes.ts), which the fact-key codec's binary form
// and the billing token's claims are written with: each kind's spelling on listed cases, a text's
// bytes as Node's own UTF-8 spells them, what each read refuses, and random values written and
// read back through a buffer that has to grow.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ByteReader, ByteWriter } from "../../runtime/bytes.js";
import { hourMillis } from "../../runtime/hour.js";

const hex = (w: ByteWriter) => Buffer.from(w.bytes.subarray(0, w.at)).toString("hex");
const reader = (hexText: string) => {
  const bytes = Buffer.from(hexText, "hex");
  return new ByteReader(bytes, 0, bytes.length);
};
/** What a text is spelt as: its UTF-8 length as a varint, then the bytes (Node's own encoder). */
const spelt = (text: string) => {
  const w = new ByteWriter();
  w.varint(Buffer.byteLength(text, "utf8"));
  return hex(w) + Buffer.from(text, "utf8").toString("hex");
};

describe("ByteWriter spells each kind", () => {
  test.each([
    [0, "00"],
    [1, "01"],
    [127, "7f"],
    [128, "8001"],
    [300, "ac02"],
    [2 ** 31, "8080808008"],
    [Number.MAX_SAFE_INTEGER, "ffffffffffffff0f"],
  ])("varint %d as %s, read back", (value, bytes) => {
    const w = new ByteWriter(1);
    expect(w.varint(value)).toBe(true);
    expect(hex(w)).toBe(bytes);
    expect(reader(bytes).varint()).toBe(value);
  });

  test.each([[-1], [1.5], [2 ** 53], [Number.NaN], [Number.POSITIVE_INFINITY], ["1"], [null], [undefined]])("varint refuses %j and writes nothing", (value) => {
    const w = new ByteWriter();
    expect(w.varint(value)).toBe(false);
    expect(w.at).toBe(0);
  });

  test("a code is a varint of at most 2^31 - 1", () => {
    const w = new ByteWriter();
    expect(w.code(2_147_483_647)).toBe(true);
    expect(w.code(2_147_483_648)).toBe(false);
    expect(w.code(-1)).toBe(false);
    expect(reader(hex(w)).code()).toBe(2_147_483_647);
    const past = new ByteWriter();
    past.varint(2_147_483_648);
    expect(reader(hex(past)).code()).toBeUndefined();
  });

  test.each([
    ["empty", ""],
    ["short ASCII", "com.example.game"],
    ["ASCII of 127 characters (a one-byte length)", "a".repeat(127)],
    ["ASCII of 128 characters (a two-byte length)", "a".repeat(128)],
    ["non-ASCII, its UTF-8 length under 128", "café"],
    ["non-ASCII late in a short text", `${"x".repeat(100)}é`],
    ["non-ASCII, 3 bytes a character, its length past 127 bytes", "€".repeat(50)],
    ["a long URL", `https://dsp.example/bill?price=2.35&id=${"9".repeat(400)}`],
    ["characters outside the BMP", "🎲 dice 𝄞"],
    ["a leading byte order mark, kept", "\uFEFFpub"],
    ["U+FFFD itself", "\uFFFD"],
  ])("text: %s, as Node's UTF-8 spells it, read back", (_, text) => {
    const w = new ByteWriter(1);
    expect(w.text(text)).toBe(true);
    expect(hex(w)).toBe(spelt(text));
    const r = reader(hex(w));
    expect(r.text()).toBe(text);
    expect(r.at).toBe(r.end);
  });

  test.each([["\uD800"], ["a\uDC00b"], [`${"x".repeat(200)}\uD83D`], [7], [null]])("text refuses %j (a lone surrogate has no UTF-8 spelling)", (value) => {
    expect(new ByteWriter().text(value)).toBe(false);
  });

  test("an hour is its hours since 1970; anything but a real whole UTC hour is refused", () => {
    const w = new ByteWriter();
    expect(w.hour("1970-01-01T01:00:00")).toBe(true);
    expect(w.hour("2026-01-01T10:00:00")).toBe(true);
    expect(w.hour("2026-01-01T10:00:00")).toBe(true);
    const r = reader(hex(w));
    expect([r.varint(), r.hour(), r.hour()]).toEqual([1, "2026-01-01T10:00:00", "2026-01-01T10:00:00"]);
    for (const bad of ["2026-01-01T10:30:00", "2026-02-30T10:00:00", "1969-12-31T23:00:00", "2026-01-01 10:00:00", "", 5]) expect(new ByteWriter().hour(bad)).toBe(false);
    expect(hourMillis("9999-12-31T23:00:00")).toBe(Date.UTC(9999, 11, 31, 23));
  });
});

describe("ByteReader refuses bytes that do not hold the value", () => {
  test.each([
    ["a varint cut short", "80", (r: ByteReader) => r.varint()],
    ["a varint of 9 bytes", "808080808080808001", (r: ByteReader) => r.varint()],
    ["a varint past 2^53 - 1", "ffffffffffffff1f", (r: ByteReader) => r.varint()],
    ["a text longer than the bytes left", "05616263", (r: ByteReader) => r.text()],
    ["a text that is not UTF-8", "02c328", (r: ByteReader) => r.text()],
    ["a text of a lone surrogate's bytes", "03eda080", (r: ByteReader) => r.text()],
    ["an hour past year 9999", "989ec821", (r: ByteReader) => r.hour()],
    ["nothing", "", (r: ByteReader) => r.code()],
  ])("%s", (_, bytes, read) => {
    expect(read(reader(bytes))).toBeUndefined();
  });

  test("reads only up to its end, from its start", () => {
    const bytes = Buffer.from("ff0361626300", "hex");
    const r = new ByteReader(bytes, 1, 5);
    expect(r.text()).toBe("abc");
    expect(r.varint()).toBeUndefined();
  });
});

describe("written and read back", () => {
  const value = fc.oneof(
    fc.record({ kind: fc.constant("varint" as const), value: fc.maxSafeNat() }),
    fc.record({ kind: fc.constant("code" as const), value: fc.integer({ min: 0, max: 2_147_483_647 }) }),
    fc.record({ kind: fc.constant("text" as const), value: fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: "grapheme", maxLength: 200 })) }),
    fc.record({ kind: fc.constant("hour" as const), value: fc.integer({ min: 0, max: 70_000_000 }).map((h) => new Date(h * 3_600_000).toISOString().slice(0, 19)) }),
  );

  test("any values, in a writer that starts at one byte: the same values, and texts spelt as Node spells them", () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 20 }), (values) => {
        const w = new ByteWriter(1);
        let expected = "";
        for (const v of values) {
          const before = w.at;
          expect(w[v.kind](v.value)).toBe(true);
          if (v.kind === "text") expect(Buffer.from(w.bytes.subarray(before, w.at)).toString("hex")).toBe(spelt(v.value));
          expected += Buffer.from(w.bytes.subarray(before, w.at)).toString("hex");
        }
        // Growing kept what was written before.
        expect(hex(w)).toBe(expected);
        const r = new ByteReader(w.bytes, 0, w.at);
        expect(values.map((v) => r[v.kind]())).toEqual(values.map((v) => v.value));
        expect(r.at).toBe(w.at);
      }),
    );
  });

  test("a writer given Buffer.allocUnsafeSlow grows into Buffers of its own memory", () => {
    const w = new ByteWriter(4, (size) => Buffer.allocUnsafeSlow(size));
    w.text("x".repeat(1000));
    expect(Buffer.isBuffer(w.bytes)).toBe(true);
    expect(w.bytes.byteOffset).toBe(0);
    expect(w.bytes.buffer.byteLength).toBe(w.bytes.length);
    expect(new ByteReader(w.bytes, 0, w.at).text()).toBe("x".repeat(1000));
  });
});
