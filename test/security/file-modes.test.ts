/**
 * Attack (issue 16, item 8): another user of the machine reading the exchange's data. Before, the
 * database and the spool files were world-readable (traffic, revenue, credential hashes, billing
 * token ids). Now every file adxkit creates for its data is 0600 and every folder 0700: the
 * commands that write data run under umask 077 (the files DuckDB makes itself, its write-ahead
 * log included), and the library creates its own files with those modes whatever the umask.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "../../service/server.js";
import { answer, bannerRequest, bid, onLoopback, startFakeBidder } from "../auction/helpers.js";
import { BUILT, CLI, ROOT, freePort, startServerProcess, stopServerProcess } from "../helpers/server-process.js";

/** Every file and folder under `dir` with its permission bits (octal), paths relative to `dir`. */
function modes(dir: string, under = ""): Record<string, string> {
  const found: Record<string, string> = {};
  for (const entry of readdirSync(join(dir, under), { withFileTypes: true })) {
    const path = join(under, entry.name);
    found[path] = (statSync(join(dir, path)).mode & 0o777).toString(8);
    if (entry.isDirectory()) Object.assign(found, modes(dir, path));
  }
  return found;
}

/** An auction with `key` (or none) and the billing call of its winning bid. */
async function auctionAndBill(url: string, key?: string): Promise<void> {
  const response = await fetch(`${url}/openrtb2/auction`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key && { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(bannerRequest({ app: { publisher: { id: "pub-1" } } })),
  });
  expect(response.status).toBe(200);
  const burl = (await response.json()).seatbid[0].bid[0].burl as string;
  expect((await fetch(burl)).status).toBe(204);
}

describe("data files are the owner's only", () => {
  it("startServer under a permissive umask: database, spool and billing keys 0600, folders 0700", async () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-modes-"));
    const dsp = await startFakeBidder((r) => ({ body: answer(r, [bid(2)]) }));
    const previous = process.umask(0o022);
    try {
      const biddersFile = join(dir, "bidders.json");
      writeFileSync(biddersFile, JSON.stringify(onLoopback([{ id: "dsp", endpoint: dsp.endpoint, seat: "s" }])));
      const server = await startServer({ db: join(dir, "data", "adxkit.duckdb"), port: 0, biddersFile, openAuction: true, logLevel: "silent" });
      try {
        await auctionAndBill(server.url);
      } finally {
        await server.close();
      }
      const found = modes(join(dir, "data"));
      for (const name of ["adxkit.duckdb", "billing-keys", "spool/database", "spool/node-id", "spool/0000000001.spool"]) expect(found[name], name).toBe("600");
      expect(found.spool).toBe("700");
    } finally {
      process.umask(previous);
      await dsp.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!BUILT)(`adxkit accounts create, then serve with auctions and billing calls: every file 0600, every folder 0700${BUILT ? "" : " — SKIPPED: dist/ is not built"}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-modes-"));
    const dsp = await startFakeBidder((r) => ({ body: answer(r, [bid(2)]) }));
    try {
      const data = join(dir, "data");
      const db = join(data, "adxkit.duckdb");
      const biddersFile = join(dir, "bidders.json");
      writeFileSync(biddersFile, JSON.stringify(onLoopback([{ id: "dsp", endpoint: dsp.endpoint, seat: "s" }])));
      const created = JSON.parse(execFileSync(process.execPath, [CLI, "accounts", "create", "--db", db, "--side", "supply", "--publisher-id", "pub-1"], { cwd: ROOT, encoding: "utf8" }));
      const node = await startServerProcess("serve", ["--db", db, "--bidders", biddersFile], await freePort());
      try {
        for (let i = 0; i < 5; i++) await auctionAndBill(node.url, created.auction_key);
        // While it runs: once the facts of those auctions are flushed (every second), DuckDB's write-ahead log exists.
        for (let waited = 0; waited < 20_000 && !existsSync(`${db}.wal`); waited += 100) await new Promise((r) => setTimeout(r, 100));
        const running = modes(data);
        expect(running).toHaveProperty("adxkit.duckdb.wal");
        expect(Object.keys(running).length).toBeGreaterThanOrEqual(5);
        for (const [name, mode] of Object.entries(running)) expect(mode, name).toBe(statSync(join(data, name)).isDirectory() ? "700" : "600");
      } finally {
        await stopServerProcess(node);
      }
      for (const [name, mode] of Object.entries(modes(data))) expect(mode, name).toBe(statSync(join(data, name)).isDirectory() ? "700" : "600");
      expect((statSync(data).mode & 0o777).toString(8)).toBe("700");
    } finally {
      await dsp.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
