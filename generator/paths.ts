import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Where a generation reads from and writes to. */
export interface GeneratorPaths {
  spec: string;
  templates: string;
  out: string;
}

/** The adxkit package root: the nearest folder above this file holding spec/ (works from source and from dist/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "spec"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("adxkit: cannot find the package root (a folder with package.json and spec/)");
    dir = up;
  }
}

/** Default paths: the package's own spec/, templates/ and generated/. */
export function defaultPaths(root = packageRoot()): GeneratorPaths {
  return { spec: resolve(root, "spec"), templates: resolve(root, "templates"), out: resolve(root, "generated") };
}
