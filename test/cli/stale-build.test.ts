// In a repository checkout the adxkit command says when dist/ predates a source compiled into it
// (bin/stale-build.js); generated/docs (served as it is) and an installed package's missing
// sources never count.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript beside the bin script, no declarations.
import { staleSource } from "../../bin/stale-build.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A checkout whose files have the given ages in seconds (0: now). */
function checkout(files: Record<string, number>): string {
  const root = mkdtempSync(join(tmpdir(), "adxkit-stale-"));
  roots.push(root);
  const now = Date.now() / 1000;
  for (const [path, age] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), "");
    utimesSync(join(root, path), now - age, now - age);
  }
  return root;
}

describe("staleSource", () => {
  it("names a source changed after the build", () => {
    const root = checkout({ "dist/service/cli/main.js": 60, "service/app.ts": 120, "generator/model.ts": 10 });
    expect(staleSource(root)).toBe(join(root, "generator/model.ts"));
  });

  it("finds nothing when the build is newer than every source", () => {
    expect(staleSource(checkout({ "dist/service/cli/main.js": 10, "service/app.ts": 60, "generated/validators/fast.js": 60 }))).toBeUndefined();
  });

  it("ignores generated/docs and declaration files, and an installed package without sources", () => {
    expect(staleSource(checkout({ "dist/service/cli/main.js": 60, "generated/docs/site.js": 0, "service/types.d.ts": 0 }))).toBeUndefined();
    expect(staleSource(checkout({ "dist/service/cli/main.js": 60, "bin/adxkit.js": 0 }))).toBeUndefined();
  });

  it("says nothing where dist/ was never built (the command says that itself)", () => {
    expect(staleSource(checkout({ "service/app.ts": 0 }))).toBeUndefined();
  });
});
