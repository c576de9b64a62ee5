// Builds @adxkit/bindings into dist/ from the repository's generated/ and runtime/:
//  - JavaScript: esbuild bundles each entry point into one ES module, with the code the entries
//    share in chunks (one copy of the runtime and the validators, whichever entry loads first).
//    Measured: a cold import of the root is about half as long as loading the ~45 modules one by
//    one, most of the difference being Node's per-module cost. The precompiled validators
//    (validators/fast.js, diagnose.js: compact already) stay files of their own beside the
//    bundles, so esbuild neither reprints them nor strips the pure annotations that let a
//    consumer's bundler drop what it does not use (esbuild's whitespace minifier would).
//  - Types: tsc writes the declarations of every source file into dist/types/; the validators'
//    own declarations (generated beside their JavaScript) are copied there.
//  - The JSON documents (schemas/, openapi/) are copied as they are.
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const repo = join(here, "..");
const generated = join(repo, "generated");
const dist = join(here, "dist");

/**
 * Entry points: each subpath package.json exports as `./dist/<name>.js` is bundled from the
 * source the repository's tsconfig.json maps that subpath to (the one list of sources).
 */
const manifest = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));
const sources = JSON.parse(readFileSync(join(repo, "tsconfig.json"), "utf8")).compilerOptions.paths;
const entryPoints = {};
const alias = {};
for (const [subpath, target] of Object.entries(manifest.exports)) {
  const output = /^\.\/dist\/([\w-]+)\.js$/.exec(target.import ?? "")?.[1];
  if (!output) continue;
  const specifier = `${manifest.name}${subpath.slice(1)}`;
  const source = sources[specifier]?.[0];
  if (!source) throw new Error(`tsconfig.json names no source for ${specifier} (package.json exports it as ${target.import})`);
  entryPoints[output] = join(repo, source);
  // Generated code imports its runtime by the package's name; here that is the source.
  if (specifier.startsWith(`${manifest.name}/runtime`)) alias[specifier] = join(repo, source);
}

rmSync(dist, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const declarations = spawnSync(process.execPath, [tsc, "-p", join(here, "tsconfig.json")], { stdio: "inherit" });
if (declarations.status !== 0) process.exit(declarations.status ?? 1);
for (const entry of readdirSync(generated, { recursive: true, withFileTypes: true })) {
  const path = relative(generated, join(entry.parentPath, entry.name));
  if (entry.isFile() && entry.name.endsWith(".d.ts") && !path.startsWith("docs")) cpSync(join(generated, path), join(dist, "types", "generated", path));
}

/** The precompiled validators, imported by validators/index.ts as ./fast.js and ./diagnose.js, are left to their own files. */
const precompiledValidators = {
  name: "precompiled-validators",
  setup(build) {
    build.onResolve({ filter: /^\.\/(fast|diagnose)\.js$/ }, (args) =>
      args.importer === join(generated, "validators", "index.ts") ? { path: `./validators-${args.path.slice(2)}`, external: true } : undefined,
    );
  },
};

await build({
  entryPoints,
  outdir: dist,
  // Chunks beside the entries, so the validators' path below is the same from both.
  chunkNames: "[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  minifySyntax: true,
  plugins: [precompiledValidators],
  alias,
  external: ["fastify"],
  legalComments: "none",
  logLevel: "warning",
});

// Beside the bundles, the validators reach the runtime by a relative path: no package lookup at import.
for (const name of ["fast", "diagnose"]) {
  const code = readFileSync(join(generated, "validators", `${name}.js`), "utf8");
  const runtimeImport = `from ${JSON.stringify(`${manifest.name}/runtime`)};`;
  if (!code.includes(runtimeImport)) throw new Error(`validators/${name}.js does not import ${manifest.name}/runtime as expected`);
  writeFileSync(join(dist, `validators-${name}.js`), code.replace(runtimeImport, 'from "./runtime.js";'));
}
for (const folder of ["schemas", "openapi"]) cpSync(join(generated, folder), join(dist, folder), { recursive: true });
