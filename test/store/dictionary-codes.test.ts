// The report side's cache of dictionary codes (service/store/duckdb/codes.ts): a value found in no
// dictionary (a publisher without traffic yet) is looked up again only after a load.
import { DuckDBConnection } from "@duckdb/node-api";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DictionaryCodes } from "../../service/store/duckdb/codes.js";
import { openStore } from "../../service/store/index.js";
import { supply, supplyQuery } from "./helpers.js";

/** A connection whose dictionary lookups find nothing, running `during` inside each lookup. */
function emptyDictionaries(during: () => void = () => {}) {
  const lookups: string[][] = [];
  const connection = {
    runAndReadAll: async (_sql: string, [values]: [{ items: string[] }]) => {
      lookups.push([...values.items]);
      during();
      return { getRowsJS: () => [] };
    },
  } as unknown as DuckDBConnection;
  return { connection, lookups };
}

describe("dictionary codes", () => {
  afterEach(() => vi.restoreAllMocks());

  it("looks an absent value up once, and again after a load", async () => {
    const codes = new DictionaryCodes();
    const { connection, lookups } = emptyDictionaries();
    const wanted = new Map([["publisher_id", ["pub-new", "pub-other"]]]);
    await codes.load(connection, wanted);
    await codes.load(connection, wanted);
    expect(lookups).toEqual([["pub-new", "pub-other"]]);
    codes.loaded();
    await codes.load(connection, wanted);
    expect(lookups).toHaveLength(2);
  });

  it("after a load, looks up again only the absent values the load's dictionaries hold or cannot tell", async () => {
    const codes = new DictionaryCodes();
    const { connection, lookups } = emptyDictionaries();
    const wanted = new Map([["publisher_id", ["pub-still-absent", "pub-added", "pub-unknown"]]]);
    await codes.load(connection, wanted);
    const held: Record<string, boolean | undefined> = { "pub-still-absent": false, "pub-added": true, "pub-unknown": undefined };
    codes.loaded((dimension, value) => (dimension === "publisher_id" ? held[value] : undefined));
    await codes.load(connection, wanted);
    expect(lookups).toEqual([["pub-still-absent", "pub-added", "pub-unknown"], ["pub-added", "pub-unknown"]]);
  });

  it("records nothing as absent from a lookup a load overlapped", async () => {
    const codes = new DictionaryCodes();
    // The load commits while the lookup runs: the lookup may have missed what it added.
    const { connection, lookups } = emptyDictionaries(() => codes.loaded());
    const wanted = new Map([["publisher_id", ["pub-new"]]]);
    await codes.load(connection, wanted);
    await codes.load(connection, wanted);
    expect(lookups).toHaveLength(2);
  });

  it("reports a publisher's rows from the load that brings its first fact", async () => {
    const store = await openStore({ db: ":memory:" });
    try {
      await store.ingest([supply({ publisher_id: "pub-1", revenue: 1 })]);
      const lookups = vi.spyOn(DuckDBConnection.prototype, "runAndReadAll");
      const query = supplyQuery({ scope: { publisher_ids: ["pub-1", "pub-new"] }, dimensions: ["publisher_id"] });
      for (let i = 0; i < 3; i++) expect((await store.report(query)).rows).toEqual([{ publisher_id: "pub-1", revenue: 1 }]);
      const dictionaryLookups = () => lookups.mock.calls.filter(([sql]) => sql.includes("FROM dim_publisher WHERE list_contains")).length;
      expect(dictionaryLookups()).toBe(1);
      // A load without pub-new: it is not looked up again.
      await store.ingest([supply({ publisher_id: "pub-1", revenue: 0 })]);
      expect((await store.report(query)).rows).toEqual([{ publisher_id: "pub-1", revenue: 1 }]);
      expect(dictionaryLookups()).toBe(1);
      await store.ingest([supply({ publisher_id: "pub-new", revenue: 2 })]);
      expect((await store.report(query)).rows).toEqual([
        { publisher_id: "pub-1", revenue: 1 },
        { publisher_id: "pub-new", revenue: 2 },
      ]);
    } finally {
      await store.close();
    }
  });
});
