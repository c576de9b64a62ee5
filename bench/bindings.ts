/**
 * What another service pays for @adxkit/bindings, and what the CLI costs to start: see USAGE.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchCommand } from "./command-line.js";
import { printTable } from "./table.js";

const USAGE = `Usage: npx tsx bench/bindings.ts [--runs N]

What another service pays for @adxkit/bindings, and what the CLI costs to start: the packed
bindings installed alone into a fresh project (size, packages, native files), the cold import of
its root in fresh processes beside an empty import, and \`adxkit --version\` / \`adxkit validate\`
of one file beside \`node -e 0\`. Medians of fresh processes, run interleaved so every contender
meets the same machine. Run \`npm run build\` first.
  --runs N            fresh processes per contender (default 9)
  -h, --help          this text

Example:
  npx tsx bench/bindings.ts --runs 15`;

const runs = benchCommand(USAGE, { runs: { type: "string" } }).integer("--runs", 9, 1);
const REPO = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(REPO, "bin", "adxkit.js");

function run(command: string, argv: string[], cwd: string): string {
  const result = spawnSync(command, argv, { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } });
  if (result.status !== 0) throw new Error(`${command} ${argv.join(" ")} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Wall time of a fresh `node ARGS` in milliseconds. */
function processMs(argv: string[], cwd: string): number {
  const started = process.hrtime.bigint();
  run(process.execPath, argv, cwd);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/**
 * Milliseconds from the first line of a fresh process to the end of `import(specifier)`, as that
 * process measures it; with `then`, to the end of that code too (run on the module as `m`).
 */
function importMs(specifier: string, cwd: string, then = ""): number {
  const out = run(process.execPath, ["--input-type=module", "-e", `const t = performance.now(); const m = await import(${JSON.stringify(specifier)}); ${then} console.log(performance.now() - t);`], cwd);
  return Number(out.trim());
}

const root = mkdtempSync(join(tmpdir(), "adxkit-bench-bindings-"));
try {
  run("npm", ["pack", "-w", "@adxkit/bindings", "--ignore-scripts", "--pack-destination", root], REPO);
  const tarball = readdirSync(root).find((name) => name.endsWith(".tgz"))!;
  const app = join(root, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  writeFileSync(join(app, "empty.mjs"), "export {};\n");
  run("npm", ["install", join(root, tarball), "--no-audit", "--no-fund"], app);
  const installed = readdirSync(join(app, "node_modules"), { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  const bytes = installed.reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
  const packages = installed.filter((e) => e.name === "package.json" && !e.parentPath.includes("dist")).length;
  const native = installed.filter((e) => e.name.endsWith(".node")).length;

  const payload = join(app, "request.json");
  writeFileSync(payload, JSON.stringify({ id: "r1", imp: [{ id: "1", banner: { w: 320, h: 50 } }] }));
  const valid = JSON.stringify({ id: "r1", imp: [{ id: "1", banner: { w: 320, h: 50 } }], app: { id: "a" } });
  const times: Record<string, number[]> = { empty: [], root: [], firstValid: [], firstInvalid: [], client: [], nodeE0: [], version: [], validate: [] };
  for (let i = 0; i < runs; i++) {
    times.empty.push(importMs("./empty.mjs", app));
    times.root.push(importMs("@adxkit/bindings", app));
    // The validators are read on their first call under Node (the diagnostic ones on the first invalid payload).
    times.firstValid.push(importMs("@adxkit/bindings", app, `m.validateBidRequest(${valid});`));
    times.firstInvalid.push(importMs("@adxkit/bindings", app, "m.validateBidRequest({});"));
    times.client.push(importMs("@adxkit/bindings/client", app));
    times.nodeE0.push(processMs(["-e", "0"], app));
    times.version.push(processMs([CLI, "--version"], app));
    times.validate.push(processMs([CLI, "validate", "bid-request", payload], app));
  }
  const ms = (name: string) => `${median(times[name]).toFixed(1)} ms`;
  const above = (name: string) => `+${(median(times[name]) - median(times.nodeE0)).toFixed(0)} ms`;
  printTable(`@adxkit/bindings as another service installs it, and the CLI's start (medians of ${runs} fresh processes)`, [
    ["figure", "value", "goal"],
    ["install size (the packed tarball, installed alone)", `${(bytes / 1024 / 1024).toFixed(2)} MB`, "≤ 5 MB (aim ≤ 3)"],
    ["packages installed / native files", `${packages} / ${native}`, "≤ 3 / 0"],
    ["import of an empty module (the loader's floor)", ms("empty"), ""],
    ['cold import("@adxkit/bindings")', ms("root"), "≤ 30 ms"],
    ["… and validateBidRequest of a valid request", ms("firstValid"), ""],
    ["… and validateBidRequest of an invalid one (every problem)", ms("firstInvalid"), ""],
    ['cold import("@adxkit/bindings/client")', ms("client"), ""],
    ["node -e 0", ms("nodeE0"), ""],
    ["adxkit --version", `${ms("version")} (${above("version")})`, "≤ 0.3 s above node -e 0"],
    ["adxkit validate bid-request (one file)", `${ms("validate")} (${above("validate")})`, "≤ 0.3 s above node -e 0"],
  ]);
} finally {
  rmSync(root, { recursive: true, force: true });
}
