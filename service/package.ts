/**
 * Where the installed adxkit package is, for the files it ships beside its code (generated/docs,
 * spec/examples, package.json): from source this module is service/package.ts, compiled it is
 * dist/service/package.js; both sit below the package root.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

/** The adxkit package root: the nearest folder above this module whose package.json is adxkit's. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === "adxkit") return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error("adxkit: cannot find the package root (a folder with adxkit's package.json)");
    dir = up;
  }
}

/** The version in adxkit's package.json. */
export function packageVersion(): string {
  return JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")).version;
}
