// The one NDJSON reader of loads (fact-source.ts), used on a load's worker thread and on the
// calling thread alike: line numbers, a byte order mark, \r\n, blank lines, a last line without
// its newline, chunks cut anywhere, and every bad line reported before the first is thrown.
import { describe, expect, it } from "vitest";
import { FactError, type Fact, type FactError as FactErrorType } from "../../service/store/index.js";
import { NdjsonFactReader } from "../../service/store/fact-source.js";
import { demand, supply } from "./helpers.js";

/** Reads `text` cut into chunks of `size` bytes; the facts read, the bad lines reported, and what the end threw. */
function read(text: string, size: number) {
  const bad: FactErrorType[] = [];
  const reader = new NdjsonFactReader({ onBadLine: (e) => bad.push(e) });
  const bytes = Buffer.from(text);
  const facts: Fact[] = [];
  for (let at = 0; at < bytes.length; at += size) facts.push(...reader.facts(bytes.subarray(at, at + size)));
  let thrown: unknown;
  try {
    facts.push(...reader.end());
  } catch (error) {
    thrown = error;
  }
  return { facts, bad: bad.map((e) => `${e.line}: ${e.reason}`), thrown, lines: reader.line };
}

const s = JSON.stringify(supply({ app_bundle_id: "com.例え.app" }));
const d = JSON.stringify(demand());

describe("NdjsonFactReader", () => {
  it.each([1, 3, 64, 1 << 20])("reads the same facts from chunks of %i bytes: BOM, \\r\\n, blank lines, no last newline", (size) => {
    const result = read(`\ufeff${s}\r\n\n   \r\n${d}\n${s}`, size);
    expect(result.facts).toEqual([supply({ app_bundle_id: "com.例え.app" }), demand(), supply({ app_bundle_id: "com.例え.app" })]);
    expect(result.bad).toEqual([]);
    expect(result.thrown).toBeUndefined();
    expect(result.lines).toBe(5);
  });

  it("reports every bad line as found, yields nothing after the first, and throws the first at the end", () => {
    const result = read([s, "{oops", s, d.replace('"platform":1', '"platform":-1'), s].join("\n"), 7);
    expect(result.facts).toEqual([supply({ app_bundle_id: "com.例え.app" })]);
    expect(result.bad).toEqual(["2: not valid JSON", '4: field "platform" must be a non-negative integer code']);
    expect(result.thrown).toBeInstanceOf(FactError);
    expect(result.thrown).toMatchObject({ line: 2, reason: "not valid JSON" });
  });

  it("takes a byte order mark on the first line only", () => {
    expect(read(`${s}\n\ufeff${d}\n`, 1 << 20).bad).toEqual(["2: not valid JSON"]);
  });
});
