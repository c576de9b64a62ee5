// The ingest, seed and accounts commands, run in-process through commander (no child processes).
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../../service/store/index.js";
import { jsonLines, runCli, supplyQuery, demandQuery } from "./helpers.js";

const run = (...argv: string[]) => runCli(argv);

let dir: string;
let db: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "adxkit-cli-"));
  db = join(dir, "data", "adxkit.duckdb");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Reads one report from the database the commands wrote. */
async function report(query = supplyQuery({ metrics: ["request"] })) {
  const store = await openStore({ db });
  try {
    return (await store.report(query)).rows;
  } finally {
    await store.close();
  }
}

const supplyLine =
  '{"side":"supply","date_hour":"2026-10-01T05:00:00","publisher_id":"pub-1","app_bundle_id":"com.example.app","placement_id":"pl-1","ad_format":1,"platform":2,"country":"USA","request":100,"response":80,"impression":60,"revenue":1.23}';
const demandLine = '{"side":"demand","date_hour":"2026-10-01T05:00:00","bidder_id":"dsp-1","ad_format":3,"platform":1,"request":100,"response":50,"impression":20,"revenue":0.9}';

describe("DuckDB's resources (--duckdb-threads, --duckdb-memory-limit)", () => {
  it("are taken by every store command, and bad values are usage errors (exit 2), checked by serve's schema", async () => {
    const file = join(dir, "facts.ndjson");
    await writeFile(file, `${supplyLine}\n`);
    expect((await run("ingest", "--db", db, "--duckdb-threads", "1", "--duckdb-memory-limit", "256MB", file)).exitCode).toBe(0);
    expect(await report()).toEqual([{ request: 100 }]);
    for (const [flag, value] of [["--duckdb-threads", "0"], ["--duckdb-threads", "two"], ["--duckdb-memory-limit", "lots"], ["--duckdb-memory-limit", "2GB; DROP"], ["--store", "mysql"], ["--clickhouse-url", "ftp://ch"]]) {
      const result = await run("ingest", "--db", db, flag, value, file);
      expect(result.exitCode, `${flag} ${value}`).toBe(2);
      expect(result.stderr).toContain(flag);
    }
  });

  it("reach DuckDB", async () => {
    const { openDatabase } = await import("../../service/store/duckdb/connection.js");
    const pool = await openDatabase(":memory:", { threads: 1, memoryLimit: "300MB" });
    try {
      const [[threads, memory]] = await pool.use(async (c) => (await c.runAndReadAll("SELECT current_setting('threads'), current_setting('memory_limit')")).getRowsJS());
      expect(Number(threads)).toBe(1);
      expect(String(memory)).toMatch(/^(286\.1 MiB|300\.0 MB)$/);
    } finally {
      await pool.close();
    }
  });
});

describe("adxkit ingest", () => {
  it("loads an NDJSON file, skipping blank lines, and prints a summary", async () => {
    const file = join(dir, "facts.ndjson");
    await writeFile(file, `${supplyLine}\n\n${supplyLine}\r\n   \n${demandLine}\n`);
    const result = await run("ingest", "--db", db, file);
    expect(result.exitCode).toBe(0);
    const [summary] = jsonLines(result.stdout);
    expect(summary).toMatchObject({ ingested: 3 });
    expect(typeof summary.seconds).toBe("number");
    expect(await report()).toEqual([{ request: 200 }]);
    expect(await report(demandQuery({ metrics: ["request"] }))).toEqual([{ request: 100 }]);
  });

  it("refuses a fact of a fact-key version newer than it reads, saying so, and loads nothing", async () => {
    const file = join(dir, "newer.ndjson");
    await writeFile(file, `${supplyLine}\n${supplyLine.replace("{", '{"v":99,')}\n`);
    const result = await run("ingest", "--db", db, file);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`${file}:2: field "v": fact-key version 99 is newer than this adxkit reads`);
    expect(await report()).toEqual([{ request: 0 }]);
  });

  it("reports every bad line with its number and reason, loads nothing, exits 1", async () => {
    const file = join(dir, "bad.ndjson");
    const lines = [supplyLine, "", supplyLine.replace('"request":100', '"request":-1'), "not json", demandLine.replace('"side":"demand"', '"side":"dsp"'), supplyLine];
    await writeFile(file, lines.join("\n"));
    const result = await run("ingest", "--db", db, file);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`${file}:3: field "request" must be a non-negative integer`);
    expect(result.stderr).toContain(`${file}:4: not valid JSON`);
    expect(result.stderr).toContain(`${file}:5: unknown side "dsp"`);
    expect(result.stderr).toContain("3 bad lines");
    expect(result.stderr).toContain("nothing was loaded");
    expect(await report()).toEqual([{ request: 0 }]);
  });

  it("exits 2 for a file that cannot be read", async () => {
    const result = await run("ingest", "--db", db, join(dir, "missing.ndjson"));
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/cannot read .*missing\.ndjson: ENOENT/);
  });
});

describe("adxkit seed", () => {
  it("loads deterministic traffic and prints what it made", async () => {
    const result = await run("seed", "--db", db, "--days", "2", "--rows", "300", "--seed", "5");
    expect(result.exitCode).toBe(0);
    expect(jsonLines(result.stdout)[0]).toMatchObject({ supply: 300, demand: 30, start: "2026-10-30T00:00:00", end: "2026-10-31T23:00:00" });
    const first = await report(supplyQuery({ metrics: ["request", "revenue"], scope: { publisher_ids: Array.from({ length: 10 }, (_, i) => `pub-${i + 1}`) } }));
    expect(first[0].request).toBeGreaterThan(0);

    // The same seed into a fresh database gives the same numbers.
    const again = join(dir, "again.duckdb");
    await run("seed", "--db", again, "--days", "2", "--rows", "300", "--seed", "5");
    const store = await openStore({ db: again });
    const second = (await store.report(supplyQuery({ metrics: ["request", "revenue"], scope: { publisher_ids: Array.from({ length: 10 }, (_, i) => `pub-${i + 1}`) } }))).rows;
    await store.close();
    expect(second).toEqual(first);
  });

  it.each([
    ["--days missing", ["--rows", "10"]],
    ["--days not a number", ["--days", "x", "--rows", "10"]],
    ["--days 0", ["--days", "0", "--rows", "10"]],
    ["a bad --end", ["--days", "1", "--rows", "10", "--end", "2026-13-01"]],
  ])("exits 2 for %s", async (_name, args) => {
    const result = await run("seed", "--db", db, ...args);
    expect(result.exitCode).toBe(2);
  });
});

describe("adxkit accounts", () => {
  it("creates, lists and revokes accounts; the credential is printed once and works", async () => {
    const created = await run("accounts", "create", "--db", db, "--side", "supply", "--publisher-id", "pub-1", "--publisher-id", "pub-2", "--legacy", "--placement-dimensions");
    expect(created.exitCode).toBe(0);
    const [{ userid, authorization, auction_key }] = jsonLines(created.stdout);
    // A supply account also gets its auction key (POST /openrtb2/auction).
    expect(Object.keys(jsonLines(created.stdout)[0])).toEqual(["userid", "authorization", "auction_key"]);
    expect(auction_key).toMatch(/^[\w-]{43}$/);

    const demand = await run("accounts", "create", "--db", db, "--side", "demand", "--bidder-id", "dsp-1");
    expect(demand.exitCode).toBe(0);
    expect(Object.keys(jsonLines(demand.stdout)[0])).toEqual(["userid", "authorization"]);

    const listed = await run("accounts", "list", "--db", db);
    expect(listed.exitCode).toBe(0);
    const accounts = jsonLines(listed.stdout);
    expect(accounts).toHaveLength(2);
    expect(accounts[0]).toMatchObject({ userid, side: "supply", publisher_ids: ["pub-1", "pub-2"], legacy: true, placement_dimensions: true, revoked: false });
    expect(accounts[1]).toMatchObject({ side: "demand", bidder_id: "dsp-1" });
    expect(listed.stdout).not.toContain(authorization);
    expect(listed.stdout).not.toContain(auction_key);
    expect(listed.stdout).not.toMatch(/hash|token|authorization/);

    let store = await openStore({ db });
    expect(await store.verifyCredentials(userid, authorization)).not.toBeNull();
    await store.close();

    const revoked = await run("accounts", "revoke", "--db", db, userid);
    expect(revoked.exitCode).toBe(0);
    store = await openStore({ db });
    expect(await store.verifyCredentials(userid, authorization)).toBeNull();
    await store.close();
  });

  it("auction-key issues a new key and retires the old one; a demand, unknown or revoked account gets none", async () => {
    const sha = (key: string) => createHash("sha256").update(key).digest("hex");
    const [supply] = jsonLines((await run("accounts", "create", "--db", db, "--side", "supply", "--publisher-id", "pub-1")).stdout);
    const [demand] = jsonLines((await run("accounts", "create", "--db", db, "--side", "demand", "--bidder-id", "dsp-1")).stdout);
    const rotated = await run("accounts", "auction-key", "--db", db, supply.userid);
    expect(rotated.exitCode).toBe(0);
    const [{ userid, auction_key }] = jsonLines(rotated.stdout);
    expect(userid).toBe(supply.userid);
    expect(auction_key).not.toBe(supply.auction_key);
    let store = await openStore({ db });
    expect(await store.auctionKeys()).toEqual([{ userid: supply.userid, publisher_ids: ["pub-1"], key_sha256: sha(auction_key) }]);
    await store.close();

    for (const who of [demand.userid, "u_nobody"]) {
      const refused = await run("accounts", "auction-key", "--db", db, who);
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr).toContain(`no live supply account ${JSON.stringify(who)}`);
    }
    await run("accounts", "revoke", "--db", db, supply.userid);
    store = await openStore({ db });
    expect(await store.auctionKeys()).toEqual([]);
    await store.close();
    expect((await run("accounts", "auction-key", "--db", db, supply.userid)).exitCode).toBe(1);
  });

  it("exits 1 when revoking an unknown userid", async () => {
    expect((await run("accounts", "create", "--db", db, "--side", "demand", "--bidder-id", "dsp-1")).exitCode).toBe(0);
    const result = await run("accounts", "revoke", "--db", db, "u_nobody");
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('no account "u_nobody"');
  });

  it.each([
    ["supply without a publisher id", ["--side", "supply"], /needs at least one --publisher-id/],
    ["demand without a bidder id", ["--side", "demand"], /needs --bidder-id/],
    ["demand with a publisher id", ["--side", "demand", "--bidder-id", "dsp-1", "--publisher-id", "pub-1"], /supply accounts only/],
    ["supply with a bidder id", ["--side", "supply", "--publisher-id", "pub-1", "--bidder-id", "dsp-1"], /demand accounts only/],
    ["no side", ["--bidder-id", "dsp-1"], /--side demand\|supply is required/],
    ["an unknown side", ["--side", "both"], /--side must be demand or supply/],
  ])("exits 2 for %s", async (_name, args, message) => {
    const result = await run("accounts", "create", "--db", db, ...args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe("");
  });

  it("documents every command with examples", async () => {
    for (const argv of [["ingest"], ["seed"], ["accounts"], ["accounts", "create"], ["accounts", "list"], ["accounts", "auction-key"], ["accounts", "revoke"]]) {
      const result = await run(...argv, "--help");
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toMatch(/Examples:\n {2}\$ adxkit /);
    }
  });
});
