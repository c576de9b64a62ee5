/**
 * Benches measure the compiled JavaScript (what users run), not TypeScript transpiled on the fly:
 * tsx's transform costs a measurable share of a microsecond-scale call. The adxkit package's
 * build is dist/; the bindings package's is bindings/dist/.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

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
