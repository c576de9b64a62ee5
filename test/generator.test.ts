// The generator: golden output of a tiny spec, drift detection on a copy of the real tree, and
// spec errors. Golden files live in test/golden/generator/<path>.golden (the suffix keeps the
// golden .ts files out of `tsc -p tsconfig.json`, which type-checks test/); after an intended
// change of the generator or templates, rewrite them with
//
//   UPDATE_GOLDEN=1 npx vitest run test/generator.test.ts
//
// and review the diff. The golden output is compared as text only (it imports its runtime from
// @adxkit/bindings/runtime); the real generated/ is exercised by the other suites.
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { generate, type GenerateResult } from "../generator/generate.js";
import { SpecError } from "../generator/load.js";
import { withoutProse } from "../generator/emit/validators.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const TINY_SPEC = join(REPO, "test", "fixtures", "generator", "spec");
const TEMPLATES = join(REPO, "templates");
const GOLDEN = join(REPO, "test", "golden", "generator");
const UPDATE = process.env.UPDATE_GOLDEN === "1";
const SUFFIX = ".golden";
const goldenPath = (path: string) => join(GOLDEN, path + SUFFIX);

const temps: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), `adxkit-${prefix}-`));
  temps.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** Files under a folder, relative, with forward slashes, sorted. */
function listFiles(root: string): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(relative(root, full).split("\\").join("/"));
    }
  };
  walk(root);
  return out.sort();
}

// Whole generator runs, some as a child process: up to 30 s each on a busy machine, so these
// suites have their own timeouts.
const GENERATOR_RUNS = { timeout: 240_000 };

describe("golden output of a tiny spec (test/fixtures/generator/spec)", GENERATOR_RUNS, () => {
  let result: GenerateResult;
  let out: string;
  const goldenFiles = listFiles(GOLDEN).map((file) => file.slice(0, -SUFFIX.length));

  beforeAll(async () => {
    out = tempDir("golden");
    result = await generate({ spec: TINY_SPEC, templates: TEMPLATES, out });
    if (UPDATE) {
      rmSync(GOLDEN, { recursive: true, force: true });
      for (const file of result.files) {
        mkdirSync(dirname(goldenPath(file.path)), { recursive: true });
        writeFileSync(goldenPath(file.path), file.contents);
      }
      console.info(`[generator] UPDATE_GOLDEN=1: rewrote ${result.files.length} files under ${relative(REPO, GOLDEN)}`);
    }
  });

  it("writes every file it generates, and nothing else", () => {
    expect(listFiles(out)).toEqual(result.files.map((f) => f.path).sort());
    expect(result.written).toBe(result.files.length);
    expect(result.model.validators.map((v) => v.kind)).toEqual(["widget"]);
  });

  it.skipIf(UPDATE)("generates exactly the golden files", () => {
    expect(listFiles(GOLDEN).every((file) => file.endsWith(SUFFIX))).toBe(true);
    expect(result.files.map((f) => f.path).sort()).toEqual(listFiles(GOLDEN).map((file) => file.slice(0, -SUFFIX.length)));
  });

  if (UPDATE) {
    it("rewrote the golden files (UPDATE_GOLDEN=1): review the diff", () => {
      expect(listFiles(GOLDEN)).toEqual(result.files.map((f) => f.path + SUFFIX).sort());
    });
  } else {
    it("has golden files (create them with UPDATE_GOLDEN=1)", () => {
      expect(goldenFiles.length).toBeGreaterThan(0);
    });
    it.each(goldenFiles)("%s matches its golden file", (path) => {
      const generated = result.files.find((f) => f.path === path);
      expect(generated, `${path} is no longer generated`).toBeDefined();
      expect(generated!.contents).toBe(readFileSync(goldenPath(path), "utf8"));
    });
  }

  it("is deterministic: a second run into the same folder finds nothing stale", async () => {
    const again = await generate({ spec: TINY_SPEC, templates: TEMPLATES, out, check: true });
    expect(again.stale).toEqual([]);
  });

  it("carries the spec's features into the output", () => {
    const file = (path: string) => result.files.find((f) => f.path === path)!.contents;
    expect(file("codelists/color.ts")).toContain("open: { minimum: 100");
    expect(file("codelists/color.ts")).toMatch(/\/\*\* blue @deprecated \*\/\s+Blue: 3,/);
    expect(file("validators/index.ts")).toContain("export function validateWidget(");
    expect(file("types/schemas.ts")).toContain("export interface Widget {");
    expect(file("stubs/widget.ts")).toContain('validators["widget"]');
    expect(file("validators/fast.js")).toContain("widget-parts-nonempty");
  });

  it("every relative import of the output names a generated file", () => {
    const generated = new Set(result.files.map((f) => f.path));
    const dangling: string[] = [];
    for (const file of result.files.filter((f) => /\.(ts|js)$/.test(f.path))) {
      for (const [, specifier] of file.contents.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
        const target = posix.normalize(posix.join(posix.dirname(file.path), specifier));
        if (!generated.has(target) && !generated.has(target.replace(/\.js$/, ".ts"))) dangling.push(`${file.path} -> ${specifier}`);
      }
    }
    expect(dangling).toEqual([]);
  });

  it("imports no package but its runtime (and Fastify's types in the stubs)", () => {
    const packages = new Set<string>();
    for (const file of result.files.filter((f) => /\.(ts|js)$/.test(f.path))) {
      for (const [, specifier] of file.contents.matchAll(/(?:from|import)\s+"([^".][^"]*)"/g)) packages.add(`${file.path.split("/")[0]}: ${specifier}`);
    }
    expect([...packages].sort()).toEqual([
      "codelists: @adxkit/bindings/runtime",
      "errors: @adxkit/bindings/runtime",
      "reports: @adxkit/bindings/runtime",
      "stubs: @adxkit/bindings/runtime/fastify",
      "stubs: fastify",
      "validators: @adxkit/bindings/runtime",
    ]);
  });
});

describe("drift: generate --check on a copy of spec/, templates/ and generated/", GENERATOR_RUNS, () => {
  let root: string;
  const paths = () => ({ spec: join(root, "spec"), templates: join(root, "templates"), out: join(root, "generated") });
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [join(REPO, "bin", "adxkit.js"), "generate", "--check", ...args], { cwd: REPO, encoding: "utf8", timeout: 120_000 });

  beforeAll(() => {
    root = tempDir("drift");
    for (const dir of ["spec", "templates", "generated"]) cpSync(join(REPO, dir), join(root, dir), { recursive: true });
  });

  it("finds nothing stale in an unchanged copy (generated/ is up to date with spec/)", async () => {
    const result = await generate({ ...paths(), check: true });
    expect(result.stale).toEqual([]);
    expect(result.written).toBe(0);
  });

  it("adxkit generate --check exits 0 on the unchanged copy", () => {
    const run = cli("--spec", paths().spec, "--templates", paths().templates, "--out", paths().out);
    // The CLI runs the compiled generator: a failure here with the API check passing means dist/ is older than generator/ (npm run build).
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain("up to date");
  });

  it("reports the stale files after a description in spec/schemas/imp.yaml changes", async () => {
    const imp = join(paths().spec, "schemas", "imp.yaml");
    const text = readFileSync(imp, "utf8");
    const edited = text.replace("Identifier of the ad placement or tag that started the auction;", "Identifier of the placement (edited by the drift test);");
    expect(edited).not.toBe(text);
    writeFileSync(imp, edited);
    const result = await generate({ ...paths(), check: true });
    expect(result.stale).toContain("types/schemas.ts (differs)");
    expect(result.stale).toContain("manifest.json (differs)");
    expect(result.stale.every((entry) => entry.endsWith(" (differs)"))).toBe(true);
    // check mode never writes
    expect(result.written).toBe(0);
    expect(readFileSync(join(paths().out, "types", "schemas.ts"), "utf8")).toBe(readFileSync(join(REPO, "generated", "types", "schemas.ts"), "utf8"));
  });

  it("adxkit generate --check exits 1 and names the stale files on stderr", () => {
    const run = cli("--spec", paths().spec, "--templates", paths().templates, "--out", paths().out);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("is stale");
    expect(run.stderr).toContain("types/schemas.ts (differs)");
    expect(run.stderr).toContain("manifest.json (differs)");
  });

  it("regenerates everything into a clean output folder", async () => {
    const out = tempDir("clean");
    const result = await generate({ spec: join(REPO, "spec"), templates: TEMPLATES, out });
    expect(result.written).toBe(result.files.length);
    expect(listFiles(out)).toEqual(listFiles(join(REPO, "generated")));
    console.info(`[generator] regenerated ${result.files.length} files from a clean folder in ${result.seconds.toFixed(2)} s`);
  });
});

describe("spec errors", () => {
  it("a typo'd x-codelist, an unknown x- keyword and a $ref to a missing file throw one SpecError listing each with its file", async () => {
    const root = tempDir("spec-error");
    cpSync(TINY_SPEC, root, { recursive: true });
    writeFileSync(
      join(root, "schemas", "gadget.yaml"),
      [
        "$schema: https://json-schema.org/draft/2020-12/schema",
        "$id: https://adxkit.dev/schemas/gadget.yaml",
        "title: Gadget",
        "type: object",
        "properties:",
        "  color:",
        "    type: integer",
        "    x-codelist: colour",
        "  weight:",
        "    type: number",
        "    x-foo: 1",
        "  owner:",
        "    $ref: person.yaml",
        "",
      ].join("\n"),
    );
    const error = await generate({ spec: root, templates: TEMPLATES, out: join(root, "out"), check: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SpecError);
    const problems = (error as SpecError).problems;
    expect(problems).toHaveLength(3);
    expect(problems.every((p) => p.startsWith("schemas/gadget.yaml"))).toBe(true);
    expect(problems.find((p) => p.includes("x-codelist colour"))).toBeDefined();
    expect(problems.find((p) => p.includes("unknown extension x-foo"))).toBeDefined();
    expect(problems.find((p) => p.includes("$ref person.yaml"))).toBeDefined();
    expect((error as SpecError).message).toContain("3 problem(s)");
    for (const problem of problems) expect((error as SpecError).message).toContain(problem);
  });

  it("x-max-length must name an integer of the report model's limits and stand without its own maxLength", async () => {
    const root = tempDir("spec-max-length");
    cpSync(TINY_SPEC, root, { recursive: true });
    const widget = join(root, "schemas", "widget.yaml");
    const text = readFileSync(widget, "utf8");
    writeFileSync(widget, text.replace("x-max-length: max-id-length", "x-max-length: max-name-length").replace("    format: report-time", "    format: report-time\n    maxLength: 19\n    x-max-length: max-id-length"));
    const error = await generate({ spec: root, templates: TEMPLATES, out: join(root, "out"), check: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SpecError);
    expect((error as SpecError).problems).toEqual([
      "schemas/widget.yaml/properties/id: x-max-length max-name-length names no integer of report-model.yaml limits",
      "schemas/widget.yaml/properties/made: x-max-length and maxLength together; write only x-max-length",
    ]);
  });

  it("the auction's x-adxkit-auction values are checked at load: each missing or mistyped one is named", async () => {
    const root = tempDir("spec-auction");
    cpSync(join(REPO, "spec"), root, { recursive: true });
    const bidding = join(root, "openapi", "bidding.yaml");
    const text = readFileSync(bidding, "utf8");
    const broken = text.replace("default-tmax-ms: 200", "default-tmax-ms: soon").replace("report-currency: USD", "report-currency: dollars").replace(/\n\s*max-burl-length: \d+/, "");
    expect(broken).not.toBe(text);
    writeFileSync(bidding, broken);
    const error = await generate({ spec: root, templates: TEMPLATES, out: join(root, "out"), check: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SpecError);
    expect((error as SpecError).problems).toEqual([
      "openapi: x-adxkit-auction.default-tmax-ms must be a number",
      "openapi: x-adxkit-auction.report-currency must be an ISO 4217 alpha code",
      "openapi: x-adxkit-auction.max-burl-length must be a number",
    ]);
  });

  it("the billing token's x-adxkit-token-formats are checked at load: the written format among those opened, each a positive integer", async () => {
    const root = tempDir("spec-token-formats");
    cpSync(join(REPO, "spec"), root, { recursive: true });
    const bidding = join(root, "openapi", "bidding.yaml");
    const text = readFileSync(bidding, "utf8");
    expect(text).toMatch(/ written: 3\n\s*opened: \[1, 2, 3\]/);
    const problems = async (replace: (text: string) => string) => {
      writeFileSync(bidding, replace(text));
      const error = await generate({ spec: root, templates: TEMPLATES, out: join(root, "out"), check: true }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(SpecError);
      return (error as SpecError).problems;
    };
    expect(await problems((t) => t.replace(" written: 3", " written: 4"))).toEqual(["openapi: x-adxkit-token-formats.opened must include the written format 4"]);
    expect(await problems((t) => t.replace(" written: 3", " written: three").replace("opened: [1, 2, 3]", "opened: [1, 0]"))).toEqual([
      "openapi: x-adxkit-token-formats.written must be a positive integer",
      "openapi: x-adxkit-token-formats.opened must be a list of distinct positive integers",
    ]);
  });

  it("problems in several schema files are all reported at once", async () => {
    const root = tempDir("spec-errors");
    cpSync(TINY_SPEC, root, { recursive: true });
    const part = join(root, "schemas", "part.yaml");
    writeFileSync(part, readFileSync(part, "utf8").replace("x-codelist: color", "x-codelist: colr"));
    const widget = join(root, "schemas", "widget.yaml");
    writeFileSync(widget, readFileSync(widget, "utf8").replace("x-recommended: true", "x-recomended: true"));
    const error = await generate({ spec: root, templates: TEMPLATES, out: join(root, "out"), check: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SpecError);
    const problems = (error as SpecError).problems;
    expect(problems).toHaveLength(2);
    expect(problems.find((p) => p.startsWith("schemas/part.yaml") && p.includes("x-codelist colr"))).toBeDefined();
    expect(problems.find((p) => p.startsWith("schemas/widget.yaml") && p.includes("unknown extension x-recomended"))).toBeDefined();
  });
});

describe("the schemas the validators compile from", () => {
  it("lose their prose, but not a property named like it, an enum's values or a deprecated field's description", () => {
    const schema = {
      title: "Thing",
      description: "prose",
      $comment: "prose",
      "x-adxkit-choice": "prose",
      properties: {
        description: { type: "string", description: "prose", examples: ["a"] },
        old: { type: "integer", deprecated: true, description: "Use new instead; kept for 2.4." },
        kind: { enum: [{ description: "a value, not a schema" }] },
      },
      items: [{ description: "prose", type: "string" }],
    };
    expect(withoutProse(schema)).toEqual({
      title: "Thing",
      properties: {
        description: { type: "string" },
        old: { type: "integer", deprecated: true, description: "Use new instead; kept for 2.4." },
        kind: { enum: [{ description: "a value, not a schema" }] },
      },
      items: [{ type: "string" }],
    });
  });
});
