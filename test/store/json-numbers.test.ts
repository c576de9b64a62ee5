// Numbers written by JS as DuckDB's JSON writer writes them (service/store/duckdb/json-numbers.ts;
// doubles: json-text.ts, its own test):
// report rows written in JS must be byte for byte the rows `json_object` made. Every expected text
// here is DuckDB's own, asked of an in-memory database.
import { describe, expect, it } from "vitest";
import { useMemoryDuckdb } from "./memory-duckdb.js";
import { writeInteger, writeScaled } from "../../service/store/duckdb/json-numbers.js";
import { Mulberry32 } from "../../service/random.js";

const duckdb = useMemoryDuckdb();

/** DuckDB's `json_object` text of each value of `expression` over `values` (a DOUBLE column `x`). */
async function duckdbTexts(values: number[], expression: string): Promise<string[]> {
  // Exact: 17 significant digits name one double, -0 included.
  const literals = values.map((x) => `(CAST('${Object.is(x, -0) ? "-0.0" : x.toPrecision(17)}' AS DOUBLE))`);
  const reader = await duckdb().runAndReadAll(`SELECT CAST(json_object('x', ${expression}) AS VARCHAR) FROM (VALUES ${literals.join(", ")}) v(x)`);
  return reader.getRows().map(([text]) => String(text).slice('{"x":'.length, -1));
}

const written = (write: (bytes: Uint8Array, at: number) => number) => {
  const bytes = new Uint8Array(64);
  return Buffer.from(bytes.subarray(0, write(bytes, 0))).toString("latin1");
};

describe("writeScaled", () => {
  it("writes N / 10^d as DuckDB's JSON writer writes floor(x × 10^d + 0.5) / 10^d", async () => {
    const random = new Mulberry32(6);
    for (const decimals of [0, 1, 2, 6, 7, 9]) {
      // Around 2^31, where the writing leaves 32-bit integer arithmetic for doubles.
      const int32 = [2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2_147_483_640, 2_147_000_000, 1_000_000_000, 999_999_999, 100_000_050];
      const scaled = [0, 1, 5, 10, 999_999, 1_000_000, 1_000_001, 123_456_789, 1e15 - 1, 1e15, 1e16 + 2, 2 ** 53, -1, -1_500_000, ...int32];
      for (let digits = 1; digits <= 17; digits++) for (let k = 0; k < 6; k++) scaled.push(Math.floor(random.next() * 10 ** digits));
      // What the report's SQL divided before: N = floor(x × 10^d + 0.5), then N / 10^d.
      const texts = await duckdbTexts(scaled, `x / 1e${decimals}`);
      expect(scaled.map((n) => written((bytes, at) => writeScaled(bytes, at, n, decimals)))).toEqual(texts);
    }
  });
});

describe("writeInteger", () => {
  it("writes whole numbers up to 2^53 as their digits", () => {
    for (const n of [0, 7, 10, 99, 100, 123_456_789, -1, -40, 2 ** 53, -(2 ** 53), 10 ** 15, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 999_999_999, 1_000_000_000, 9_999, 10_000, 99_999, 100_000, 9_999_999, 10_000_000]) {
      expect(written((bytes, at) => writeInteger(bytes, at, n))).toBe(String(n));
    }
  });
});
