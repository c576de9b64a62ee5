/**
 * Benches measure the compiled JavaScript (what users run), not TypeScript transpiled on the fly:
 * tsx's transform costs a measurable share of a microsecond-scale call. The adxkit package's
 * build is dist/; the bindings package's is bindings/dist/.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// Under tsx, tsconfig.json's paths send `@adxkit/bindings` to generated/*.ts even from dist/: the
// compiled exchange then ran the bindings transpiled on the fly (esbuild's name-keeping helpers
// included), ~15–25 % more CPU per auction than the bundle `adxkit serve` loads. So a bench runs
// itself again with tsconfig.build.json (no paths): every import of the package reaches its build.
if (!import.meta.resolve("@adxkit/bindings").includes("/bindings/dist/")) {
  if (process.env.TSX_TSCONFIG_PATH) throw new Error(`@adxkit/bindings resolves to ${import.meta.resolve("@adxkit/bindings")}, not its build, even with TSX_TSCONFIG_PATH=${process.env.TSX_TSCONFIG_PATH}`);
  const again = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit", env: { ...process.env, TSX_TSCONFIG_PATH: fileURLToPath(new URL("../tsconfig.build.json", import.meta.url)) } });
  process.exit(again.status ?? 1);
}

async function load<T>(url: URL, shown: string): Promise<T> {
  if (!existsSync(fileURLToPath(url))) throw new Error(`${shown} is missing: run \`npm run build\` first (npm run bench does)`);
  return (await import(url.href)) as T;
}

/** A module of adxkit's own build, by its path under dist/. */
export function loadCompiled<T>(path: string): Promise<T> {
  return load<T>(new URL(`../dist/${path}`, import.meta.url), `dist/${path}`);
}

/** The compiled @adxkit/bindings (its root entry). */
export function loadBindings(): Promise<typeof import("@adxkit/bindings")> {
  return load(new URL("../bindings/dist/index.js", import.meta.url), "bindings/dist/index.js");
}
