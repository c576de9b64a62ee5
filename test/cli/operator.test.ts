/**
 * The command line an operator meets (compiled CLI, as a child process): `serve` options from
 * flags, ADXKIT_* variables and defaults, secrets only from the environment or a file and
 * redacted by --print-config; bad values exit 2 with one line naming the flag and what it takes;
 * a reader that goes away ends the command quietly; a command that only reads a database refuses
 * a path that does not exist; the demo fails at once on a taken port and fills every ad format
 * it offers.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { PATIENCE_MS } from "../auction/helpers.js";
import { BUILT, CLI, ROOT } from "../helpers/server-process.js";

const dir = mkdtempSync(join(tmpdir(), "adxkit-operator-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The environment of a child: this one's without any ADXKIT_* or PORT variable, plus `extra`. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ADXKIT_") && name !== "PORT"));
  return { ...clean, ...extra };
}

const adxkit = (args: string[], extra: Record<string, string> = {}) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, env: env(extra), encoding: "utf8", timeout: 60_000 });

/** A port some other process listens on, for the duration of `work`. */
async function withTakenPort<T>(work: (port: number) => Promise<T> | T): Promise<T> {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  try {
    return await work((taken.address() as { port: number }).port);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
}

describe.skipIf(!BUILT)(`adxkit serve's options${BUILT ? "" : " — SKIPPED: dist/ is not built (npm run build)"}`, { timeout: 120_000 }, () => {
  test("--print-config: a flag wins over its variable, a variable over the default; secrets are redacted, never printed", () => {
    const passwordFile = join(dir, "clickhouse-password");
    writeFileSync(passwordFile, "s3cret-from-file\n");
    const result = adxkit(["serve", "--print-config", "--log-level", "debug"], {
      ADXKIT_LOG_LEVEL: "warn",
      PORT: "9100",
      ADXKIT_MAX_CPM: "25.5",
      ADXKIT_LENIENT: "true",
      ADXKIT_SPOOL: "false",
      ADXKIT_CLICKHOUSE_URL: "http://adxkit:url-password@ch.example:8123/adxkit",
      ADXKIT_CLICKHOUSE_PASSWORD_FILE: passwordFile,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).not.toContain("s3cret-from-file");
    expect(result.stdout).not.toContain("url-password");
    expect(JSON.parse(result.stdout)).toEqual({
      db: { value: "./data/adxkit.duckdb", from: "default" },
      store: { value: "duckdb", from: "default" },
      backgroundNice: { value: 10, from: "default" },
      backgroundIdle: { value: false, from: "default" },
      warmUpRequests: { value: 300, from: "default" },
      clickhouseUrl: { value: "http://adxkit:[redacted]@ch.example:8123/adxkit", from: "ADXKIT_CLICKHOUSE_URL" },
      clickhousePassword: { value: "[redacted]", from: "ADXKIT_CLICKHOUSE_PASSWORD_FILE" },
      host: { value: "127.0.0.1", from: "default" },
      port: { value: 9100, from: "PORT" },
      openAuction: { value: false, from: "default" },
      maxCpm: { value: 25.5, from: "ADXKIT_MAX_CPM" },
      spool: { value: false, from: "ADXKIT_SPOOL" },
      requestTimeoutMs: { value: 30000, from: "default" },
      headersTimeoutMs: { value: 10000, from: "default" },
      maxConnections: { value: 4096, from: "default" },
      lenient: { value: true, from: "ADXKIT_LENIENT" },
      logLevel: { value: "debug", from: "--log-level" },
    });
    expect(JSON.parse(adxkit(["serve", "--print-config", "--warm-up-requests", "0"]).stdout).warmUpRequests).toEqual({ value: 0, from: "--warm-up-requests" });
    // ADXKIT_PORT comes before PORT; the flag before both.
    expect(JSON.parse(adxkit(["serve", "--print-config"], { ADXKIT_PORT: "9200", PORT: "9100" }).stdout).port).toEqual({ value: 9200, from: "ADXKIT_PORT" });
    expect(JSON.parse(adxkit(["serve", "--print-config", "--port", "0"], { ADXKIT_PORT: "9200" }).stdout).port).toEqual({ value: 0, from: "--port" });
  });

  test.each([
    ["--port abc", ["--port", "abc"], {}, '--port: port is the string "abc"; expected an integer'],
    ["--port 70000", ["--port", "70000"], {}, "--port: port is 70000; expected at most 65535"],
    ["ADXKIT_LOG_LEVEL=verbose", [], { ADXKIT_LOG_LEVEL: "verbose" }, '--log-level (from ADXKIT_LOG_LEVEL): logLevel is "verbose"; expected one of "fatal", "error", "warn", "info", "debug", "trace", "silent"'],
    ["--max-cpm -1", ["--max-cpm", "-1"], {}, "--max-cpm: maxCpm is -1; expected more than 0"],
    ["--store mysql", ["--store", "mysql"], {}, '--store: store is "mysql"; expected one of "duckdb", "clickhouse"'],
  ])("a bad value (%s) exits 2 with one line naming the flag and what it takes", (_what, args, variables, message) => {
    const result = adxkit(["serve", ...args], variables);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split("\n")).toEqual([`adxkit: ${message} — usage: adxkit serve [options], see adxkit serve --help`]);
    expect(result.stdout).toBe("");
  });

  test("a secret flag does not exist: the ClickHouse password goes in the environment", () => {
    const result = adxkit(["serve", "--clickhouse-password", "x"]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^error: unknown option '--clickhouse-password'/);
  });
});

describe.skipIf(!BUILT)("commands that fail loudly", { timeout: 120_000 }, () => {
  test("a reader that goes away ends the command quietly (no EPIPE stack trace)", () => {
    const file = join(ROOT, "test/fixtures/bid-request/valid");
    const one = spawnSync("ls", [file], { encoding: "utf8" }).stdout.split("\n").filter(Boolean)[0];
    const files = Array.from({ length: 3000 }, () => join(file, one));
    writeFileSync(join(dir, "args"), files.join("\n"));
    const result = spawnSync("bash", ["-c", `set -o pipefail; xargs -a args node ${JSON.stringify(CLI)} validate bid-request --json | head -1`], { cwd: dir, env: env(), encoding: "utf8", timeout: 60_000 });
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  test("accounts list on a database that does not exist exits 2 and creates nothing", () => {
    const result = adxkit(["accounts", "list", "--db", "typo/x.duckdb"]);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split("\n")).toEqual(["adxkit: --db typo/x.duckdb: no such database (this command reads one; serve, seed, ingest and accounts create make one)"]);
    expect(existsSync(join(dir, "typo"))).toBe(false);
  });

  test("serve and demo on a taken port exit 1 at once with one line, before opening or seeding anything", async () => {
    await withTakenPort((port) => {
      for (const command of [["serve", "--db", "served/adxkit.duckdb"], ["demo", "--db", "demo/adxkit.duckdb"]]) {
        const result = adxkit([...command, "--port", String(port)]);
        expect(result.status, command[0]).toBe(1);
        expect(result.stderr.trim().split("\n")).toEqual([`adxkit: port ${port} on 127.0.0.1 is in use by another process: choose another with --port (or PORT / ADXKIT_PORT), or 0 for any free port`]);
      }
      expect(existsSync(join(dir, "served"))).toBe(false);
      expect(existsSync(join(dir, "demo"))).toBe(false);
    });
  });
});

describe.skipIf(!BUILT)("adxkit demo", () => {
  test("fills every ad format it offers, and shows the operator's endpoints", { timeout: 180_000 }, async () => {
    const demo = spawn(process.execPath, [CLI, "demo", "--db", ":memory:", "--port", "0", "--rows", "1000", "--rate", "40"], { cwd: ROOT, env: env(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    demo.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      const deadline = Date.now() + PATIENCE_MS * 6; // start-up and filling, generous on a loaded machine
      while (!stdout.includes("Stop with Ctrl-C") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      const url = /adxkit is running at (\S+)/.exec(stdout)?.[1];
      const [, userid, authorization] = /supply \(B\)[^\n]*x-userid (\S+)\s+x-authorization (\S+)/.exec(stdout) ?? [];
      expect(url, stdout).toBeDefined();
      expect(stdout).toContain(`${url}/ready`);
      expect(stdout).toContain(`${url}/metrics`);
      const today = new Date().toISOString().slice(0, 10);
      const impressions = async () => {
        const response = await fetch(`${url}/api/report/v1`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-userid": userid, "x-authorization": authorization },
          body: JSON.stringify({ start: `${today}T00:00:00`, end: `${today}T23:59:59`, dimensions: ["ad_format"], metrics: ["impression"] }),
        });
        const body = (await response.json()) as { data: { data: { ad_format: number; impression: number }[] } };
        return new Map(body.data.data.map((row) => [row.ad_format, row.impression]));
      };
      // Banner, native, video and rewarded video (the example whose floor is 4.0) all fill.
      let filled = new Map<number, number>();
      while (Date.now() < deadline && ![1, 2, 3, 4].every((format) => (filled.get(format) ?? 0) > 0)) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        filled = await impressions();
      }
      expect(Object.fromEntries(filled)).toMatchObject({ 1: expect.any(Number), 2: expect.any(Number), 3: expect.any(Number), 4: expect.any(Number) });
      for (const format of [1, 2, 3, 4]) expect(filled.get(format), `ad format ${format}`).toBeGreaterThan(0);
    } finally {
      demo.kill("SIGTERM");
      await new Promise((resolve) => demo.once("exit", resolve));
    }
  });
});
