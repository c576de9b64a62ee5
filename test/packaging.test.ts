// Both packages as a consumer meets them: `npm pack` (of what `npm test` just built), publint and
// @arethetypeswrong/cli on the tarballs, then each installed into a fresh project.
//  - @adxkit/bindings alone: no dependency, no native code, a few MB; imported as ESM and with
//    require(); types checked with skipLibCheck off and no @types/node; tree-shaken by a bundler.
//  - adxkit (CLI and server) with the bindings tarball beside it: needs the npm registry (or
//    npm's cache) for its own dependencies.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import { build } from "esbuild";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const REPO = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(REPO, "node_modules", ".bin");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const MINUTES = 60_000;

let root: string;
/** The bindings' tarball, packed once for both projects. */
let bindingsTarball: string;

function run(command: string, args: string[], cwd: string, timeout = 2 * MINUTES): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, encoding: "utf8", timeout, env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" } });
}

/** A failed step, with what it printed, so a broken pack or install explains itself. */
function explain(step: string, result: SpawnSyncReturns<string>): string {
  const output = `${result.stderr ?? ""}\n${result.stdout ?? ""}`.trim().split("\n").slice(-25).join("\n");
  if (/E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT)|ETIMEDOUT|network/i.test(output)) {
    return `${step}: the npm registry is unreachable (and npm's cache lacks the dependencies); this step needs one of them.\n${output}`;
  }
  if (result.error) return `${step}: ${result.error.message}\n${output}`;
  return `${step} exited ${result.status}:\n${output}`;
}

function ok(step: string, result: SpawnSyncReturns<string>): SpawnSyncReturns<string> {
  if (result.status !== 0) throw new Error(explain(step, result));
  return result;
}

/** Packs a workspace (or the root) of what `npm run build` made, into a folder of its own; returns the tarball's path. */
function pack(workspace: string[]): string {
  const dest = mkdtempSync(join(root, "pack-"));
  ok(`npm pack ${workspace.join(" ")}`, run(npm, ["pack", ...workspace, "--ignore-scripts", "--pack-destination", dest], REPO, 3 * MINUTES));
  const tarball = readdirSync(dest).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack wrote no tarball into ${dest}`);
  return join(dest, tarball);
}

/** A fresh ESM project with the given tarballs installed. */
function project(name: string, tarballs: string[]): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `adxkit-consumer-${name}`, private: true, type: "module" }, null, 2));
  ok(`npm install ${tarballs.join(" ")}`, run(npm, ["install", ...tarballs, "--prefer-offline"], dir, 4 * MINUTES));
  return dir;
}

/** Every file below a folder with its size. */
function files(dir: string): { path: string; bytes: number }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, bytes: statSync(path).size };
    });
}

/** A consumer's tsconfig: NodeNext, strict, skipLibCheck off, no @types/node, no DOM. */
const consumerTsconfig = (file: string) =>
  JSON.stringify({
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], strict: true, noEmit: true, skipLibCheck: false, types: [] },
    files: [file],
  });

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "adxkit-pack-"));
  bindingsTarball = pack(["-w", "@adxkit/bindings"]);
}, 3 * MINUTES);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("@adxkit/bindings, installed alone by another service", { timeout: 5 * MINUTES }, () => {
  let tarball: string;
  let app: string;
  const installed = () => join(app, "node_modules", "@adxkit", "bindings");

  beforeAll(() => {
    tarball = bindingsTarball;
    app = project("bindings", [tarball]);
  }, 5 * MINUTES);

  it("passes publint and @arethetypeswrong/cli (ESM only: require() works through Node's require(esm))", () => {
    ok("publint", run(join(BIN, "publint"), [tarball, "--strict"], root));
    ok("attw", run(join(BIN, "attw"), [tarball, "--ignore-rules", "cjs-resolves-to-esm", "--no-emoji", "--no-color"], root));
  });

  it("is one package of a few MB, without native code", () => {
    const packages = readdirSync(join(app, "node_modules"), { recursive: true }).filter((path) => String(path).endsWith("package.json") && !String(path).includes("dist"));
    expect(packages.map(String)).toEqual([join("@adxkit", "bindings", "package.json")]);
    const shipped = files(installed());
    expect(shipped.filter((f) => f.path.endsWith(".node"))).toEqual([]);
    const bytes = shipped.reduce((sum, f) => sum + f.bytes, 0);
    expect(bytes).toBeLessThan(3 * 1024 * 1024);
    const manifest = JSON.parse(readFileSync(join(installed(), "package.json"), "utf8"));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.sideEffects).toBe(false);
  });

  it("imports as ESM and with require(), validates, and answers the same both ways", () => {
    const payload = { id: "r1", imp: [{ id: "1", banner: { w: 320, h: 50 } }], device: { geo: { lat: 91 } } };
    writeFileSync(
      join(app, "check.mjs"),
      `import { validateBidRequest, validateBidResponse, Platform, iab, reportStatusMessage, macros } from "@adxkit/bindings";
import { createDemandReportClient } from "@adxkit/bindings/client";
import { createValidator } from "@adxkit/bindings/runtime";
import schema from "@adxkit/bindings/schemas/bid-request.schema.json" with { type: "json" };
const request = ${JSON.stringify(payload)};
console.log(JSON.stringify({
  result: validateBidRequest(request),
  response: validateBidResponse({ id: "r1", seatbid: [{ bid: [{ id: "b", impid: "9", price: 1 }] }] }, request).errors.map((e) => e.rule),
  android: Platform.Android, label: Platform.label(3), blocked: iab.isBlockedBy("IAB1-2", ["IAB1"]),
  msg: reportStatusMessage(-3), macros: macros.length > 0,
  client: typeof createDemandReportClient, runtime: typeof createValidator, schema: schema.title,
}));
`,
    );
    writeFileSync(
      join(app, "check.cjs"),
      `const { validateBidRequest, Platform } = require("@adxkit/bindings");
const schema = require("@adxkit/bindings/schemas/bid-request.schema.json");
console.log(JSON.stringify({ result: validateBidRequest(${JSON.stringify(payload)}), android: Platform.Android, schema: schema.title }));
`,
    );
    const esm = JSON.parse(ok("node check.mjs", run(process.execPath, ["check.mjs"], app)).stdout);
    const cjs = JSON.parse(ok("node check.cjs", run(process.execPath, ["check.cjs"], app)).stdout);
    expect(esm.result.valid).toBe(false);
    expect(esm.result.errors).toEqual([expect.objectContaining({ path: "/device/geo/lat", rule: "range" })]);
    expect(esm.response).toEqual(["bid-impid-exists"]);
    expect(esm).toMatchObject({ android: 2, label: "Other", blocked: true, msg: "token authorized failed.", macros: true, client: "function", runtime: "function", schema: "BidRequest" });
    expect(cjs).toEqual({ result: esm.result, android: 2, schema: "BidRequest" });
  });

  it("under Node, reads the validators on their first call, not at import (a cold import parses little)", () => {
    // A copy of the installed package without its validators' files: importing it and using a
    // code list must work, and only the first validation must go looking for them.
    const lazyApp = join(root, "lazy-app");
    cpSync(app, lazyApp, { recursive: true, dereference: true });
    const lazyPackage = join(lazyApp, "node_modules", "@adxkit", "bindings");
    for (const set of ["fast", "diagnose"]) rmSync(join(lazyPackage, "dist", `validators-${set}.js`));
    writeFileSync(
      join(lazyApp, "lazy.mjs"),
      `import { validateBidRequest, Platform } from "@adxkit/bindings";
let validation;
try { validateBidRequest({}); } catch (error) { validation = String(error.message); }
console.log(JSON.stringify({ label: Platform.label(2), validation }));
`,
    );
    const out = JSON.parse(ok("node lazy.mjs", run(process.execPath, ["lazy.mjs"], lazyApp)).stdout);
    expect(out.label).toBe("Android");
    expect(out.validation).toMatch(/validators-fast\.js/);
  });

  it("type-checks a consumer with skipLibCheck off and no @types/node, and rejects a wrong field type", () => {
    writeFileSync(
      join(app, "good.ts"),
      `import { type BidRequest, type ValidationResult, validateBidRequest, Platform, codelists } from "@adxkit/bindings";
import { createSupplyReportClient, type SupplyReportClient } from "@adxkit/bindings/client";
import { defineCodelist, type CodelistApi } from "@adxkit/bindings/runtime";
const r: BidRequest = { id: "r1", imp: [{ id: "1", banner: { w: 300, h: 250 } }], app: { bundle: "com.example" }, at: 1 };
const result: ValidationResult = validateBidRequest(r);
const client: SupplyReportClient = createSupplyReportClient({ baseUrl: "http://127.0.0.1:8080", userid: "u", authorization: "a" });
const list: CodelistApi<number | string> = codelists["platform"];
export const ok = [result.valid, Platform.Android, client, list, defineCodelist];
`,
    );
    writeFileSync(join(app, "bad.ts"), `import { type BidRequest } from "@adxkit/bindings";\nexport const r: BidRequest = { id: "r1", imp: [{ id: "1", banner: { w: "300", h: 250 } }] };\n`);
    writeFileSync(join(app, "tsconfig.good.json"), consumerTsconfig("good.ts"));
    writeFileSync(join(app, "tsconfig.bad.json"), consumerTsconfig("bad.ts"));
    const good = run(join(BIN, "tsc"), ["-p", "tsconfig.good.json"], app);
    expect(good.status, good.stdout + good.stderr).toBe(0);
    const bad = run(join(BIN, "tsc"), ["-p", "tsconfig.bad.json"], app);
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toMatch(/bad\.ts\(2,\d+\): error TS2322/);
  });

  it("bundles for a browser: one code list is a few KB (sideEffects: false), the validators need no Node module", async () => {
    const bundle = async (code: string) => {
      const file = join(app, `entry-${Math.random().toString(36).slice(2)}.mjs`);
      writeFileSync(file, code);
      const result = await build({ entryPoints: [file], bundle: true, format: "esm", platform: "browser", minify: true, write: false, logLevel: "silent" });
      return result.outputFiles[0].text;
    };
    const oneList = await bundle(`import { Platform } from "@adxkit/bindings"; console.log(Platform.label(2));`);
    expect(oneList.length).toBeLessThan(8 * 1024);
    expect(oneList).not.toContain("bidRequest");
    const validators = await bundle(`import { validateBidRequest } from "@adxkit/bindings"; console.log(validateBidRequest({}).valid);`);
    expect(validators).toContain("imp-id-unique");
    expect(validators).not.toMatch(/from\s*"node:|require\(/);
  });

  it("ships JSON Schemas that plain ajv applies as the bindings do, and the bundled OpenAPI documents", () => {
    // Plain ajv knows none of the spec's formats (currency, language, …: the bindings' runtime has them): left out.
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const validate = ajv.compile(JSON.parse(readFileSync(join(installed(), "dist", "schemas", "bid-request.schema.json"), "utf8")));
    const examples = join(REPO, "spec", "examples", "bid-request");
    for (const name of readdirSync(examples)) expect(validate(JSON.parse(readFileSync(join(examples, name), "utf8"))), name).toBe(true);
    expect(validate({ id: "r1", imp: [{ id: "1", banner: { pos: 99 } }] })).toBe(false);
    expect(validate.errors).toContainEqual(expect.objectContaining({ instancePath: "/imp/0/banner/pos", keyword: "enum" }));
    const openapi = JSON.parse(readFileSync(join(installed(), "dist", "openapi", "bidding.openapi.json"), "utf8"));
    expect(openapi.openapi).toMatch(/^3\.1/);
  });
});

describe("adxkit, installed with the bindings beside it", { timeout: 8 * MINUTES }, () => {
  let tarball: string;
  let app: string;

  beforeAll(() => {
    tarball = pack([]);
    app = project("adxkit", [tarball, bindingsTarball]);
  }, 8 * MINUTES);

  it("passes publint and @arethetypeswrong/cli", () => {
    ok("publint", run(join(BIN, "publint"), [tarball, "--strict"], root));
    ok("attw", run(join(BIN, "attw"), [tarball, "--ignore-rules", "cjs-resolves-to-esm", "--no-emoji", "--no-color"], root));
  });

  it("ships only what package.json `files` names, with dist/ built", () => {
    const installed = join(app, "node_modules", "adxkit");
    const top = readdirSync(installed).sort();
    expect(top).toEqual(["README.md", "bin", "dist", "generated", "package.json", "spec", "templates"]);
    expect(readdirSync(join(installed, "dist")).sort()).toEqual(["generator", "service"]);
  });

  it("keeps the bindings at its root for existing users, and the server at adxkit/service", () => {
    writeFileSync(
      join(app, "check.mjs"),
      `import { validateBidRequest, Platform, iab, createSupplyReportClient, exchangePlugin } from "adxkit";
import { openStore } from "adxkit/service";
const store = await openStore({ db: ":memory:" });
const accounts = await store.listAccounts();
await store.close();
console.log(JSON.stringify({ valid: validateBidRequest({ id: "r1", imp: [{ id: "1", banner: { w: 1, h: 1 } }] }).valid, android: Platform.Android,
  blocked: iab.isBlockedBy("IAB25-3", ["IAB25"]), client: typeof createSupplyReportClient, plugin: typeof exchangePlugin, accounts }));
`,
    );
    const out = JSON.parse(ok("node check.mjs", run(process.execPath, ["check.mjs"], app)).stdout);
    expect(out).toEqual({ valid: true, android: 2, blocked: true, client: "function", plugin: "function", accounts: [] });
  });

  it("runs `npx adxkit validate` and `adxkit --version` from the installed package", () => {
    writeFileSync(join(app, "good.json"), JSON.stringify({ id: "r1", imp: [{ id: "1", banner: { w: 320, h: 50 } }] }));
    writeFileSync(join(app, "bad.json"), JSON.stringify({ id: "r1", imp: [{ id: "1", banner: { w: 320, h: 50 } }], device: { geo: { lat: 91 } } }));
    const good = run(npx, ["--no-install", "adxkit", "validate", "bid-request", "good.json"], app);
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toContain("valid   good.json");
    const bad = run(npx, ["--no-install", "adxkit", "validate", "bid-request", "bad.json", "--json"], app);
    expect(bad.status).toBe(1);
    expect(JSON.parse(bad.stdout).errors).toEqual([expect.objectContaining({ path: "/device/geo/lat", rule: "range" })]);
    const version = ok("adxkit --version", run(npx, ["--no-install", "adxkit", "--version"], app));
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version);
  });

  it("generates bindings into another project's folder, importing their runtime from @adxkit/bindings", () => {
    ok("adxkit generate --out", run(npx, ["--no-install", "adxkit", "generate", "--out", "src/bindings"], app, 3 * MINUTES));
    const index = readFileSync(join(app, "src", "bindings", "validators", "index.ts"), "utf8");
    expect(index).toContain('from "@adxkit/bindings/runtime"');
    expect(readdirSync(join(app, "src", "bindings")).sort()).toEqual(expect.arrayContaining(["codelists", "validators", "types", "index.ts"]));
  });
});
