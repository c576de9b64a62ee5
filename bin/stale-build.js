// In a repository checkout: whether dist/ predates a source it is compiled from (a `git pull` or
// an edit since the last build). The compiled CLI would then run old code, and a stale generator
// judges the spec by old rules. An installed package ships no sources beside dist/: nothing to
// compare, nothing read.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** What `npm run compile` compiles into dist/ (generated/docs is served as it is, not compiled). */
const SOURCES = ["generator", "service", "runtime", "generated", "bindings/scripts"];

/** The first source file changed after the compiled CLI was written, or undefined. */
export function staleSource(root) {
  let built;
  try {
    built = statSync(join(root, "dist", "service", "cli", "main.js")).mtimeMs;
  } catch {
    return undefined;
  }
  const docs = join(root, "generated", "docs");
  for (const folder of SOURCES) {
    let entries;
    try {
      entries = readdirSync(join(root, folder), { recursive: true, withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (!entry.isFile() || !/\.(ts|js|mjs)$/.test(entry.name) || entry.name.endsWith(".d.ts") || entry.parentPath.startsWith(docs)) continue;
      const path = join(entry.parentPath, entry.name);
      if (statSync(path).mtimeMs > built) return path;
    }
  }
  return undefined;
}
