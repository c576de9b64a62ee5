// The package as a consumer gets it: `npm pack` (its prepare script builds dist/), install the
// tarball into a fresh ESM project, then use the library, the `adxkit` binary and the types from
// there. Needs the npm registry (or npm's cache) for adxkit's dependencies.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const TSC = join(REPO, "node_modules", ".bin", "tsc");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const MINUTES = 60_000;

let root: string;
let app: string;

function run(command: string, args: string[], cwd: string, timeout = 2 * MINUTES): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, encoding: "utf8", timeout, env: { ...process.env, npm_config_update_notifier: "false" } });
}

/** A failed step, with what it printed, so a broken pack or install explains itself. */
function explain(step: string, result: SpawnSyncReturns<string>): string {
  const output = `${result.stderr ?? ""}\n${result.stdout ?? ""}`.trim().split("\n").slice(-25).join("\n");
  if (/E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT)|ETIMEDOUT|network/i.test(output)) {
    return `${step}: the npm registry is unreachable (and npm's cache lacks adxkit's dependencies); this test needs one of them.\n${output}`;
  }
  if (result.error) return `${step}: ${result.error.message}\n${output}`;
  return `${step} exited ${result.status}:\n${output}`;
}

describe("packaging: npm pack → npm install → import, bin, types", { timeout: 5 * MINUTES }, () => {
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "adxkit-pack-"));
    app = join(root, "app");

    const pack = run(npm, ["pack", "--pack-destination", root], REPO, 4 * MINUTES);
    if (pack.status !== 0) throw new Error(explain("npm pack", pack));
    const tarball = readdirSync(root).find((name) => name.endsWith(".tgz"));
    if (!tarball) throw new Error(`npm pack wrote no tarball into ${root}`);

    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "adxkit-consumer", private: true, type: "module" }, null, 2));
    const install = run(npm, ["install", join(root, tarball), "--prefer-offline", "--no-audit", "--no-fund"], app, 3 * MINUTES);
    if (install.status !== 0) throw new Error(explain("npm install <tarball>", install));
  }, 5 * MINUTES);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("ships only what package.json `files` names, with dist/ built", () => {
    const installed = join(app, "node_modules", "adxkit");
    const top = readdirSync(installed).sort();
    expect(top).toEqual(expect.arrayContaining(["bin", "dist", "package.json", "spec", "templates"]));
    expect(top).not.toContain("test");
    expect(top).not.toContain("node_modules");
    expect(readdirSync(join(installed, "dist", "generated"))).toContain("index.js");
  });

  it("imports as ESM and validates correctly (the precompiled validators need no require)", () => {
    writeFileSync(
      join(app, "check.mjs"),
      `import { validateBidRequest, validateBidResponse, Platform, iab } from "adxkit";
const request = { id: "r1", imp: [{ id: "1", banner: { w: 300, h: 250 } }], cur: ["USD"] };
const out = {
  valid: validateBidRequest(request),
  invalid: validateBidRequest({ id: "r1", imp: [] }),
  lenient: validateBidRequest({ id: "r1", imp: [{ id: "1", banner: { pos: 99 } }] }, { lenient: true }),
  response: validateBidResponse({ id: "r1", seatbid: [{ bid: [{ id: "b", impid: "9", price: 1 }] }] }, request),
  android: Platform.Android,
  label: Platform.label(3),
  blocked: iab.isBlockedBy("IAB1-2", ["IAB1"]),
  category: iab.isCategory("IAB27"),
};
console.log(JSON.stringify(out));
`,
    );
    const result = run(process.execPath, ["check.mjs"], app);
    expect(result.status, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.valid).toEqual({ valid: true, errors: [], warnings: [] });
    expect(out.invalid.valid).toBe(false);
    expect(out.invalid.errors).toEqual([expect.objectContaining({ path: "/imp", rule: "items" })]);
    expect(out.lenient.valid).toBe(true);
    expect(out.lenient.warnings).toEqual([expect.objectContaining({ path: "/imp/0/banner/pos", rule: "codelist" })]);
    expect(out.response.errors).toEqual([expect.objectContaining({ path: "/seatbid/0/bid/0/impid", rule: "bid-impid-exists" })]);
    expect(out).toMatchObject({ android: 2, label: "Other", blocked: true, category: false });

    const validators = join(app, "node_modules", "adxkit", "dist", "generated", "validators");
    for (const file of readdirSync(validators).filter((name) => name.endsWith(".js"))) {
      expect(readFileSync(join(validators, file), "utf8"), file).not.toMatch(/\brequire\(/);
    }
  });

  it("runs `npx adxkit validate` from the installed package", () => {
    writeFileSync(join(app, "good.json"), JSON.stringify({ id: "r1", imp: [{ id: "1", banner: { w: 320, h: 50 } }] }));
    writeFileSync(join(app, "bad.json"), JSON.stringify({ id: "r1", imp: [{ id: "1", banner: { w: 320, h: 50 } }], device: { geo: { lat: 91 } } }));
    const good = run(npx, ["--no-install", "adxkit", "validate", "bid-request", "good.json"], app);
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toContain("valid   good.json");
    const bad = run(npx, ["--no-install", "adxkit", "validate", "bid-request", "bad.json", "--json"], app);
    expect(bad.status).toBe(1);
    expect(JSON.parse(bad.stdout).errors).toEqual([expect.objectContaining({ path: "/device/geo/lat", rule: "range" })]);
  });

  it("type-checks a consumer's TypeScript (module NodeNext), and rejects a wrong field type", () => {
    const tsconfig = (file: string) =>
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: [] },
        files: [file],
      });
    writeFileSync(
      join(app, "good.ts"),
      `import { type BidRequest, type ValidationResult, validateBidRequest } from "adxkit";
const r: BidRequest = { id: "r1", imp: [{ id: "1", banner: { w: 300, h: 250 } }], app: { bundle: "com.example" }, at: 1 };
const result: ValidationResult = validateBidRequest(r);
export const ok: boolean = result.valid;
`,
    );
    writeFileSync(
      join(app, "bad.ts"),
      `import { type BidRequest } from "adxkit";
export const r: BidRequest = { id: "r1", imp: [{ id: "1", banner: { w: "300", h: 250 } }] };
`,
    );
    writeFileSync(join(app, "tsconfig.good.json"), tsconfig("good.ts"));
    writeFileSync(join(app, "tsconfig.bad.json"), tsconfig("bad.ts"));

    const good = run(TSC, ["-p", "tsconfig.good.json"], app);
    expect(good.status, good.stdout + good.stderr).toBe(0);
    const bad = run(TSC, ["-p", "tsconfig.bad.json"], app);
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toMatch(/bad\.ts\(2,\d+\): error TS2322/);
  });
});
