// `adxkit settle` (compiled CLI, as a child process): --help with examples; bad usage exits 2 with
// one line; a DuckDB store is refused with the reason (nothing to settle there); an unreachable
// ClickHouse is one line, exit 1; on ClickHouse one pass settles the due days of both sides,
// prints them as JSON and its steps on stderr, and a second pass finds nothing due.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { BUILT, CLI, ROOT } from "../helpers/server-process.js";
import { daysAgo } from "../store-clickhouse/billed-helpers.js";
import { CLICKHOUSE_URL, disposeTestStore, openTestStore, skipReason, type TestStore } from "../store-clickhouse/server.js";

const adxkit = (args: string[]) => spawnSync(process.execPath, [CLI, "settle", ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
const built = BUILT ? "" : " — SKIPPED: dist/ is not built (npm run build)";

describe.skipIf(!BUILT)(`adxkit settle's command line${built}`, { timeout: 60_000 }, () => {
  test("--help explains when a day is due and gives examples", () => {
    const help = adxkit(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Examples:\n  $ adxkit settle --store clickhouse --clickhouse-url http://ch:8123/adxkit");
    expect(help.stdout).toMatch(/A day is due 70 min after its end/);
  });

  test.each([
    ["an unknown flag", ["--days", "3"], /^error: unknown option '--days'\nusage: adxkit settle \[options\]/],
    ["an argument", ["2026-10-01"], /^error: too many arguments for 'settle'/],
    ["an unknown engine", ["--store", "postgres"], /^adxkit: --store: store is "postgres"; expected one of "duckdb", "clickhouse" — see adxkit settle --help\n$/],
    ["a DuckDB store", [], /^adxkit: settle applies to a ClickHouse store \(--store clickhouse --clickhouse-url URL\): on DuckDB billed impressions are counted into the hourly facts as they come, so there is nothing to settle\n$/],
    ["ClickHouse without its address", ["--store", "clickhouse"], /^adxkit: --store clickhouse needs --clickhouse-url URL/],
    ["a URL that is not http", ["--store", "clickhouse", "--clickhouse-url", "ch:8123"], /^adxkit: --clickhouse-url: clickhouseUrl is "ch:8123"; expected text matching \^https\?:\/\/ — see adxkit settle --help\n$/],
  ])("exits 2 on %s, with one line saying why", (_, args, message) => {
    const run = adxkit(args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe("");
  });

  test("an unreachable ClickHouse is one line naming it, password hidden, exit 1", () => {
    const run = adxkit(["--store", "clickhouse", "--clickhouse-url", "http://adxkit:s3cret@127.0.0.1:1/adxkit"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^adxkit: no ClickHouse store could be opened at http:\/\/adxkit:\[redacted\]@127\.0\.0\.1:1\/adxkit: .*ECONNREFUSED.*\n$/);
    expect(run.stderr).not.toContain("s3cret");
  });
});

const reason = BUILT ? await skipReason() : "dist/ is not built";
describe.skipIf(reason !== undefined)(`adxkit settle on ClickHouse at ${CLICKHOUSE_URL}${reason ? ` — SKIPPED: ${reason}` : ""}`, { timeout: 60_000 }, () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore();
    // Written as an exchange's flush would, but without the late marks a write this late makes
    // (its days are due): a mark in the second a pass begins makes the next pass settle its day again.
    const { createClient } = await import("@clickhouse/client");
    const client = createClient({ url: CLICKHOUSE_URL });
    try {
      for (const [token, hour] of [["a", `${daysAgo(4)} 05:00:00`], ["b", `${daysAgo(3)} 23:00:00`], ["c", `${daysAgo(0)} 00:00:00`]]) {
        await client.command({ query: `INSERT INTO ${store.database}.supply_billed SELECT toDateTime('${hour}', 'UTC'), 'pub-1', 'com.example', 'pl-1', 1, 2, 'USA', 0, 0, 1, 0.002, '${token}'` });
        await client.command({ query: `INSERT INTO ${store.database}.demand_billed SELECT toDateTime('${hour}', 'UTC'), 'dsp-1', 1, 2, 0, 0, 1, 0.002, '${token}'` });
      }
    } finally {
      await client.close();
    }
  });
  afterAll(() => disposeTestStore(store));

  test("settles the due days of both sides, says each step, and finds nothing due the second time", async () => {
    const url = `${CLICKHOUSE_URL}/${store.database}`;
    const first = adxkit(["--store", "clickhouse", "--clickhouse-url", url]);
    expect(first.status, first.stderr).toBe(0);
    const { settled, seconds } = JSON.parse(first.stdout) as { settled: Record<string, string[]>; seconds: number };
    expect(settled.supply[0]).toBe(daysAgo(4));
    expect(settled.supply).toContain(daysAgo(3));
    expect(settled.supply).not.toContain(daysAgo(0));
    expect(settled.demand).toEqual(settled.supply);
    expect(seconds).toBeGreaterThanOrEqual(0);
    const span = `${settled.supply[0]} … ${settled.supply.at(-1)}`;
    for (const side of ["supply", "demand"]) {
      expect(first.stderr).toContain(`settle: ${side} ${span}: summing billed impressions…\n`);
      expect(first.stderr).toMatch(new RegExp(`settle: ${side} ${span}: settled in \\d+\\.\\d s\\n`));
    }

    const second = adxkit(["--store", "clickhouse", "--clickhouse-url", url]);
    expect(second.status, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).settled).toEqual({ supply: [], demand: [] });
    expect(second.stderr).toBe("settle: nothing due: every day past its settling time is settled already\n");
  });
});
