// Dependencies point one way: spec → generator → generated (+ runtime) → service. These checks read
// the import statements of the repository's own files, so a new import against that direction
// fails here rather than in a consumer's install.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("..", import.meta.url));

function sources(folder: string, pattern = /\.(ts|js)$/): string[] {
  return readdirSync(join(REPO, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && pattern.test(entry.name) && !entry.parentPath.includes(`${folder}/docs`))
    .map((entry) => relative(REPO, join(entry.parentPath, entry.name)));
}

/** Static imports (`import … from "x"`, `export … from "x"`) of a file. */
function staticImports(file: string): string[] {
  const text = readFileSync(join(REPO, file), "utf8");
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
}

describe("the direction of dependencies", () => {
  it("runtime/ imports only its own files (and Fastify's types in fastify.ts): no package, no Node module", () => {
    const outside = sources("runtime").flatMap((file) =>
      staticImports(file)
        .filter((specifier) => !specifier.startsWith("./") && !(file === "runtime/fastify.ts" && specifier === "fastify"))
        .map((specifier) => `${file} -> ${specifier}`),
    );
    expect(outside).toEqual([]);
  });

  it("generated/ imports only its own files, its runtime and (in the stubs) Fastify's types", () => {
    const allowed = new Set(["@adxkit/bindings/runtime", "@adxkit/bindings/runtime/fastify", "fastify"]);
    const outside = sources("generated").flatMap((file) =>
      staticImports(file)
        .filter((specifier) => !specifier.startsWith(".") && !allowed.has(specifier))
        .map((specifier) => `${file} -> ${specifier}`),
    );
    expect(outside).toEqual([]);
  });

  it("service/ never imports the generator statically (generate and docs load it when they run)", () => {
    const offenders = sources("service").flatMap((file) => staticImports(file).filter((s) => s.includes("generator/")).map((s) => `${file} -> ${s}`));
    expect(offenders).toEqual([]);
    const dynamic = sources("service").filter((file) => /import\("[^"]*generator\//.test(readFileSync(join(REPO, file), "utf8")));
    expect(dynamic.sort()).toEqual(["service/cli/commands/docs.ts", "service/cli/commands/generate.ts"]);
  });

  it("service/ reaches generated code only through @adxkit/bindings", () => {
    const offenders = sources("service").flatMap((file) => staticImports(file).filter((s) => s.includes("generated/")).map((s) => `${file} -> ${s}`));
    expect(offenders).toEqual([]);
  });

  it("the CLI's entry loads no command's code before it knows which command runs", () => {
    expect(staticImports("service/cli/main.ts").sort()).toEqual(["../package.js", "./errors.js", "commander"]);
  });
});
