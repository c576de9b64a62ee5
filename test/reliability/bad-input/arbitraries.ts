/**
 * Generators of bad input shared by the bad-input tests (test/reliability/bad-input-*.test.ts):
 * hostile strings, numbers JSON cannot hold, malformed or deep JSON, bytes that are not UTF-8,
 * content types, prototype keys, oversized bodies, wrong credentials.
 */
import fc from "fast-check";
import { expect } from "vitest";

/** What the reports' default body limit is (the auction's own limit is lower): anything above is refused by both. */
export const BODY_LIMIT = 1024 * 1024;

export interface Case {
  payload: string | Buffer;
  contentType?: string;
  /** What the case is, for the failure message. */
  what: string;
}

/** fast-check prints counterexamples: keep a megabyte payload to its first 300 characters. */
export function short<T extends Case>(c: T): T {
  return Object.assign(c, { [fc.toStringMethod]: () => `${c.what} [${c.contentType ?? "application/json"}] ${JSON.stringify(c.payload.toString().slice(0, 300))}${c.payload.length > 300 ? `… (${c.payload.length} bytes)` : ""}` });
}

export const json = (value: unknown) => JSON.stringify(value);
const sqlish = ["'", '"', ";", "--", "/*", "*/", "%", "_", "\\", "\u0000", "\u0001", "\n", "\r", "\t", "\u2028", "\ufeff", "\ud800", " OR 1=1", "'; DROP TABLE accounts; --", "$1", "?", "`"];
export const sqlString = fc.array(fc.oneof(fc.constantFrom(...sqlish), fc.string({ maxLength: 4 })), { maxLength: 8 }).map((parts) => parts.join(""));
export const anyString = fc.oneof(fc.string({ maxLength: 20, unit: "binary" }), sqlString);
export const nanLike = fc.constantFrom("NaN", "-NaN", "Infinity", "-Infinity", "1e999", "-1e999", "0x10", "0b1", "1_000", " 1", "1 ", "+1", ".5", "1.", "", "null", "undefined", "true", "١٢", "1e", "--1");
export const hugeNumberText = fc.oneof(
  fc.constantFrom("1e309", "-1e309", "1e400", "-1e400", "9007199254740993", "-9007199254740993", "1.7976931348623157e308", "5e-324", "-0"),
  fc.tuple(fc.bigInt({ min: 10n ** 15n, max: 10n ** 400n }), fc.boolean()).map(([n, negative]) => `${negative ? "-" : ""}${n}`),
);

/** A JSON value of a type other than `kind` (one of the JSON kinds). */
export function otherThan(kind: "string" | "number" | "integer" | "array" | "object" | "boolean"): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [fc.constant(null)];
  if (kind !== "boolean") options.push(fc.boolean());
  if (kind !== "number" && kind !== "integer") options.push(fc.double(), fc.integer());
  if (kind === "integer") options.push(fc.double({ noInteger: true, noDefaultInfinity: true, noNaN: true }));
  if (kind !== "string") options.push(anyString, nanLike);
  if (kind !== "array") options.push(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }));
  if (kind !== "object") options.push(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }));
  return fc.oneof(...options);
}

/** Truncated text (never the whole), or text with one character inserted/deleted/replaced to break it. */
export function malformed(text: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer({ min: 0, max: text.length - 1 }).map((n) => text.slice(0, n)),
    fc.tuple(fc.integer({ min: 0, max: text.length }), fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "\\", "NaN", "undefined", "'", "\u0000", "//", "/*", "0x1", "\ud800")).map(([i, s]) => text.slice(0, i) + s + text.slice(i)),
  ).filter((t) => {
    try {
      JSON.parse(t);
      return false;
    } catch {
      return true;
    }
  });
}

/** Deep nesting (arrays or objects), optionally unbalanced. */
export const deep = fc.tuple(fc.integer({ min: 600, max: 5_000 }), fc.boolean(), fc.boolean()).map(([depth, objects, balanced]) => {
  const open = objects ? '{"a":' : "[";
  const close = objects ? "}" : "]";
  return open.repeat(depth) + "1" + close.repeat(balanced ? depth : depth - 1);
});

/** Bytes that are not UTF-8, inserted into a JSON text at a position after a `:` or `,` or inside a string value. */
export const badBytes = fc.constantFrom(
  Buffer.from([0xff]),
  Buffer.from([0xfe, 0xff]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xe2, 0x82]),
);
export function withBadBytes(text: string, positions: number[]): fc.Arbitrary<Buffer> {
  return fc.tuple(fc.constantFrom(...positions), badBytes).map(([i, bytes]) => Buffer.concat([Buffer.from(text.slice(0, i)), bytes, Buffer.from(text.slice(i))]));
}
/** Indexes just after each `:` and `,` of a JSON text without those characters in strings. */
export const structural = (text: string) => [...text].flatMap((c, i) => (c === ":" || c === "," ? [i + 1] : []));

/** Content types Fastify cannot parse at all: refused before the route runs (app.ts answers in the interface's form). */
export const unparseableContentTypes = ["json", "application/", ""];
export const wrongContentType = fc.constantFrom(...unparseableContentTypes, "text/plain", "text/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "application/jsonp", "application/octet-stream", "json", "application/", "*/*", "application/x-json-stream");

/** Objects whose keys try to reach a prototype. */
export const protoKeys = fc.constantFrom(
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"__proto__":{"__proto__":{"polluted":"yes"}}}',
  '[{"__proto__":{"polluted":"yes"}}]',
  '{"prototype":{"polluted":"yes"},"__defineGetter__":1,"hasOwnProperty":"x","toString":1,"valueOf":{}}',
);

/** Object.prototype's own names before any test ran: a polluted prototype shows in them. */
const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();

export function prototypeIntact(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
  expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
}

/** Whether a text is JSON of an object (a report body that is not is -2 for that alone). */
export function isObjectJson(text: string): boolean {
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Oversized bodies: `min` bytes and more, JSON-shaped (a long string) or not. */
export const oversized = fc.tuple(fc.integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT + 200_000 }), fc.boolean()).map(([n, shaped]) => {
  const payload = shaped ? `{"start":"${"x".repeat(n)}"}` : "x".repeat(n);
  return Object.assign(new String(payload), { [fc.toStringMethod]: () => `${payload.length} bytes` });
});

/** Wrong or missing credentials, with any body (precedence: -3 first). */
export const wrongCredentials = fc.record({
  userid: fc.option(fc.oneof(sqlString, fc.constant("u_000000000000"), fc.string({ maxLength: 80 })), { nil: undefined }),
  authorization: fc.option(fc.oneof(sqlString, fc.string({ maxLength: 80 })), { nil: undefined }),
  swap: fc.boolean(),
});
