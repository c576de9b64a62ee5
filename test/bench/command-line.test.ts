/**
 * The bench scripts' command lines (bench/command-line.ts): every entry point answers --help with
 * its usage (exit 0) and an unknown option with exit 2, and the bad command lines of
 * bad-usage.json exit 2 naming what is wrong. Every exit comes before the script's work: a run
 * that started a bench would not end within the test's timeout. Entry points are found, not
 * listed: the bench files no other bench file imports, and those that read a command line.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BENCH = `${ROOT}bench/`;
const badUsage = JSON.parse(readFileSync(new URL("bad-usage.json", import.meta.url), "utf8")) as {
  cases: { rule: string; script: string; args?: string[]; env?: Record<string, string>; says: string }[];
};

const sources = new Map(readdirSync(BENCH).filter((name) => name.endsWith(".ts")).map((name) => [name, readFileSync(`${BENCH}${name}`, "utf8")]));
const imported = new Set([...sources.values()].flatMap((text) => [...text.matchAll(/["']\.\/([\w-]+)\.js["']/g)].map((m) => `${m[1]}.ts`)));
const entryPoints = [...sources]
  .filter(([name, text]) => name !== "command-line.ts" && (!imported.has(name) || text.includes("benchCommand(")))
  .map(([name]) => name)
  .sort();

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `node --import tsx bench/<script> ...args` in the repository, with the tsconfig bench/compiled.ts
 * would otherwise start the script again with (one process, not two, per case).
 */
function run(script: string, args: string[], env: Record<string, string> = {}): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", `${BENCH}${script}`, ...args], { cwd: ROOT, env: { ...process.env, TSX_TSCONFIG_PATH: `${ROOT}tsconfig.build.json`, ...env }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr }),
    );
  });
}

describe.concurrent("bench scripts' command lines", () => {
  it("finds the entry points, command-line.ts's users among them", () => {
    expect(entryPoints).toEqual(expect.arrayContaining(["auction.ts", "reports-http.ts", "run.ts", "validators.ts"]));
    for (const name of entryPoints) expect(sources.get(name), `${name} reads no command line`).toContain("benchCommand(");
  });

  it.each(entryPoints)("%s --help prints its usage and exits 0", async (script) => {
    const exit = await run(script, ["--help"]);
    expect(exit.stderr).toBe("");
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/^Usage: /);
  }, 90_000);

  it.each(entryPoints)("%s exits 2 on an unknown option, with the usage", async (script) => {
    const exit = await run(script, ["--no-such-option"]);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain("--no-such-option");
    expect(exit.stderr).toContain("Usage: ");
    expect(exit.stdout).toBe("");
  }, 90_000);

  it.each(badUsage.cases)("$script: $rule", async ({ script, args = [], env = {}, says }) => {
    const exit = await run(script, args, env);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain(says);
    expect(exit.stderr).toContain("Usage: ");
  }, 90_000);
});
