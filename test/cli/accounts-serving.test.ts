// `adxkit accounts` while `adxkit serve` holds the DuckDB file (issue 21): the CLI finds the
// server's admin API through <db>.admin.json and changes the accounts there; a revoked
// credential and a revoked or replaced auction key stop working as soon as the command returns.
// Runs the compiled CLI (dist/, built by npm test) as child processes, on 127.0.0.1.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBidder, type RunningBidder } from "../../service/bidder/index.js";
import { auctionStatus, reportStatus } from "../helpers/account-requests.js";
import { BUILT, CLI, freePort, ROOT, startServerProcess, stopServerProcess, type ServerProcess } from "../helpers/server-process.js";

/** Runs `adxkit ARGS`; its exit code and output (bounded: 60 s). */
function adxkit(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`adxkit ${args.join(" ")} did not end within 60 s`));
    }, 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe.skipIf(!BUILT)(`accounts while serving${BUILT ? "" : " — SKIPPED: dist/ is not built (npx tsc -p tsconfig.build.json)"}`, () => {
  const dir = mkdtempSync(join(tmpdir(), "adxkit-accounts-serving-"));
  const db = join(dir, "adxkit.duckdb");
  // Without the admin variables of whoever runs the tests: the CLI must find the server by the file.
  const env = { ...process.env, ADXKIT_ADMIN_KEY: undefined, ADXKIT_ADMIN_KEY_FILE: undefined, ADXKIT_ADMIN_URL: undefined };
  let bidder: RunningBidder | undefined;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    bidder = await startBidder({ id: "dsp-1", seat: "seat-1", fill: 1, seed: 3 });
    const biddersFile = join(dir, "bidders.json");
    writeFileSync(biddersFile, JSON.stringify([{ id: "dsp-1", endpoint: bidder.endpoint, seat: "seat-1", timeout_ms: 2000, allow_private_addresses: true }]));
    server = await startServerProcess("server", ["--db", db, "--bidders", biddersFile], await freePort(), env);
  }, 120_000);

  afterAll(async () => {
    if (server) await stopServerProcess(server).catch(() => server!.child.kill("SIGKILL"));
    await bidder?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const report = (userid: string, authorization: string, path?: string) => reportStatus(server!.url, userid, authorization, path);
  const auction = (key: string) => auctionStatus(server!.url, key);

  it("creates, lists, re-keys and revokes through the server; the old credentials fail as soon as the command returns", { timeout: 180_000 }, async () => {
    // The admin file: the server's address and key, readable by its owner only.
    expect(statSync(`${db}.admin.json`).mode & 0o777).toBe(0o600);

    const created = await adxkit(["accounts", "create", "--db", db, "--side", "supply", "--publisher-id", "pub-1"], env);
    expect(created, created.stderr).toMatchObject({ code: 0 });
    const supply = JSON.parse(created.stdout) as { userid: string; authorization: string; auction_key: string };
    const demandRun = await adxkit(["accounts", "create", "--db", db, "--side", "demand", "--bidder-id", "dsp-1"], env);
    expect(demandRun.code, demandRun.stderr).toBe(0);
    const demand = JSON.parse(demandRun.stdout) as { userid: string; authorization: string; auction_key?: string };
    expect(demand.auction_key).toBeUndefined();
    expect(await report(supply.userid, supply.authorization)).toBe(0);
    expect(await auction(supply.auction_key)).not.toBe(401);

    const listed = await adxkit(["accounts", "list", "--db", db], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split("\n").map((line) => JSON.parse(line) as { userid: string; revoked: boolean })).toEqual([
      expect.objectContaining({ userid: supply.userid, side: "supply", publisher_ids: ["pub-1"], revoked: false }),
      expect.objectContaining({ userid: demand.userid, side: "demand", bidder_id: "dsp-1", revoked: false }),
    ]);
    expect(listed.stdout).not.toContain(supply.authorization);

    // A new auction key: the new one works and the old one does not, at once.
    const rekeyed = await adxkit(["accounts", "auction-key", "--db", db, supply.userid], env);
    expect(rekeyed.code, rekeyed.stderr).toBe(0);
    const { auction_key: newKey } = JSON.parse(rekeyed.stdout) as { auction_key: string };
    expect(await auction(supply.auction_key)).toBe(401);
    expect(await auction(newKey)).not.toBe(401);

    // Revoked: the report credential and the auction key fail on the next request.
    const revoked = await adxkit(["accounts", "revoke", "--db", db, supply.userid], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ userid: supply.userid, revoked: true });
    expect(await report(supply.userid, supply.authorization)).toBe(-3);
    expect(await auction(newKey)).toBe(401);
    expect(await report(demand.userid, demand.authorization, "/api/report/demand_report_v2")).toBe(0);

    // Unknown accounts and bad input answer as the commands always did.
    const unknown = await adxkit(["accounts", "revoke", "--db", db, "u_000000000000"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no account "u_000000000000"');
    const tooLong = await adxkit(["accounts", "create", "--db", db, "--side", "supply", "--publisher-id", "p".repeat(600)], env);
    expect(tooLong.code).toBe(2);
  });

  it("refuses a wrong admin key, and callers without one", { timeout: 60_000 }, async () => {
    const wrong = await adxkit(["accounts", "list", "--db", db], { ...env, ADXKIT_ADMIN_KEY: "not-the-key" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/admin API at http:\/\/127\.0\.0\.1:\d+ answered: this is not the server's admin key/);
    const anonymous = await fetch(`${server!.url}/admin/accounts`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ errors: [{ path: "", rule: "admin-key-invalid", message: "the admin key is required: Authorization: Bearer <key>" }] });
  });
});
