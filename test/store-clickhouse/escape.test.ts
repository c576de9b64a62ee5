// The one escaping function (quoteString) of the literal fallback, property-tested: offline
// against a strict reading of ClickHouse's string-literal rules, and live: arbitrary strings
// (quotes, backslashes, control characters, any Unicode, injection fragments) round-trip
// unchanged through the server, and as placement ids, app bundles, publisher ids and filter
// values they go through a load and a report unchanged, never matching anything else.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quoteString } from "../../service/store/clickhouse/sql.js";
import { supply, supplyQuery } from "../store/helpers.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason, type TestStore } from "./server.js";

/** Pieces an attacker would try, mixed into arbitrary text. */
const NASTY = ["'", "\\", "\\'", "''", "\\\\'", "'\\", "\n", "\r", "\t", "\0", "\x1b", "\x7f", "--", "/*", "*/", ";", ")", "(", "`", '"', "{p0:String}", "{x:UInt8}", " OR 1=1", "' OR '1'='1", "\\x27", "\\0", "\u2028", "\ufeff", "é", "😀", "\u0301", "%27", "?"];
const stringArb = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.array(fc.oneof(fc.constantFrom(...NASTY), fc.string({ unit: "binary", maxLength: 4 })), { maxLength: 12 }).map((parts) => parts.join("")),
);
/** Strings JS can send as UTF-8 at all (a lone surrogate has no UTF-8 form, escaped or not). */
const wellFormed = stringArb.filter((s) => !/\p{Cs}/u.test(s));

/**
 * Reads a single-quoted literal as ClickHouse's lexer does, strictly: the token ends at the first
 * unescaped quote, which must be the last character. Returns the value, or throws.
 */
function readLiteral(sql: string): string {
  if (sql[0] !== "'") throw new Error("does not start with a quote");
  let out = "";
  for (let i = 1; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'") {
      if (i !== sql.length - 1) throw new Error(`the literal ends at ${i}, before the text does: the rest would be SQL`);
      return out;
    }
    if (c === "\\") {
      const next = sql[++i];
      if (next === "x") {
        const hex = sql.slice(i + 1, i + 3);
        if (!/^[0-9a-f]{2}$/.test(hex)) throw new Error("bad \\x escape");
        out += String.fromCharCode(parseInt(hex, 16));
        i += 2;
      } else if (next === "\\" || next === "'") out += next;
      else throw new Error(`escape \\${next} is never produced`);
      continue;
    }
    if (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) throw new Error("a raw control character in the SQL text");
    out += c;
  }
  throw new Error("unterminated literal");
}

describe("quoteString (offline)", () => {
  it("reads back as the same string, ending exactly at its closing quote", () => {
    fc.assert(
      fc.property(stringArb, (s) => {
        expect(readLiteral(quoteString(s))).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });

  it("escapes the known dangerous characters", () => {
    expect(quoteString("a'b")).toBe("'a\\'b'");
    expect(quoteString("a\\")).toBe("'a\\\\'");
    expect(quoteString("\0\n\x7f")).toBe("'\\x00\\x0a\\x7f'");
    expect(quoteString("😀é")).toBe("'😀é'");
  });
});

const reason = await skipReason();

describe.skipIf(reason !== undefined)(`quoteString against ClickHouse at ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`, () => {
  it("round-trips arbitrary strings through the server unchanged", async () => {
    const { createClient, ClickHouseLogLevel } = await import("@clickhouse/client");
    const client = createClient({ url: CLICKHOUSE_URL, log: { level: ClickHouseLogLevel.OFF } });
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(wellFormed, { minLength: 1, maxLength: 25 }), async (strings) => {
          // Each string twice: as an array element and as its own column, with a marker after it
          // (a literal that ended early would shift or swallow the marker).
          const columns = strings.map((s, i) => `${quoteString(s)} AS c${i}, 'marker${i}' AS m${i}`).join(", ");
          const query = `SELECT [${strings.map(quoteString).join(", ")}] AS all_values, length(all_values) AS n, ${columns}`;
          const result = await client.query({ query, format: "JSONEachRow" });
          const [row] = (await result.json()) as Record<string, unknown>[];
          expect(row.all_values).toEqual(strings);
          expect(Number(row.n)).toBe(strings.length);
          strings.forEach((s, i) => {
            expect(row[`c${i}`]).toBe(s);
            expect(row[`m${i}`]).toBe(`marker${i}`);
          });
        }),
        { numRuns: 150 },
      );
    } finally {
      await client.close();
    }
  });

  for (const forceLiterals of [true, false]) {
    describe(forceLiterals ? "as report values, escaped literals" : "as report values, the server's default", () => {
      let store: TestStore;
      beforeAll(async () => {
        store = await openTestStore({ forceLiterals });
      });
      afterAll(async () => {
        await disposeTestStore(store);
      });

      it("placement ids, app bundles and publisher ids go through a load and a report unchanged", async () => {
        let run = 0;
        const idArb = wellFormed.filter((s) => s.length <= 512);
        await fc.assert(
          fc.asyncProperty(idArb, idArb, idArb, async (placement, app, publisher) => {
            // Each run its own hour, so runs never meet.
            const hour = new Date(Date.UTC(2026, 0, 1) + run++ * 3_600_000).toISOString().slice(0, 19);
            const window = { start: hour, end: hour };
            await store.ingest([
              supply({ date_hour: hour, publisher_id: publisher, app_bundle_id: app, placement_id: placement, request: 1 }),
              supply({ date_hour: hour, publisher_id: publisher, app_bundle_id: `${app}x`, placement_id: `${placement}x`, request: 10 }),
              supply({ date_hour: hour, publisher_id: `${publisher}x`, app_bundle_id: app, placement_id: placement, request: 100 }),
            ]);
            const scope = { publisher_ids: [publisher] };
            const byPlacement = await store.report(
              supplyQuery({ ...window, scope, metrics: ["request"], dimensions: ["placement_id", "app_bundle_id", "publisher_id"], filters: { placement_id: [placement] } }),
            );
            expect(byPlacement.rows).toEqual([{ placement_id: placement, app_bundle_id: app, publisher_id: publisher, request: 1 }]);
            const byApp = await store.report(supplyQuery({ ...window, scope, metrics: ["request"], filters: { app_bundle_id: [app] } }));
            expect(byApp.rows).toEqual([{ request: 1 }]);
            const all = await store.report(supplyQuery({ ...window, scope, metrics: ["request"] }));
            expect(all.rows).toEqual([{ request: 11 }]);
            // A filter value never loaded (any text at all, as country) matches nothing.
            const none = await store.report(supplyQuery({ ...window, scope, metrics: ["request"], filters: { country: [placement, app] } }));
            expect(none.rows).toEqual([{ request: 0 }]);
          }),
          { numRuns: 40 },
        );
      });
    });
  }
});
