// A typo in the spec's own meta-files (code lists, errors.yaml, report-model.yaml) or a clash with
// what the report model generates fails the load with the file and the path inside it. Each case
// of test/fixtures/generator/spec-typos.json edits one spot of a copy of spec/.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadSpec, SpecError } from "../generator/load.js";
import { buildModel } from "../generator/model.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const cases: { name: string; file: string; find: string; replace: string; problem: string }[] = JSON.parse(readFileSync(join(REPO, "test/fixtures/generator/spec-typos.json"), "utf8"));
const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

describe("spec typos fail the load, naming file and path", () => {
  it.each(cases)("$name", async ({ file, find, replace, problem }) => {
    const root = mkdtempSync(join(tmpdir(), "adxkit-typo-"));
    temps.push(root);
    cpSync(join(REPO, "spec"), root, { recursive: true });
    const path = join(root, file);
    const text = readFileSync(path, "utf8");
    expect(text, `the case's text is in spec/${file}`).toContain(find);
    writeFileSync(path, text.replace(find, replace));
    const error = await loadSpec(root).then(buildModel).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(SpecError);
    expect((error as SpecError).problems.join("\n")).toContain(problem);
  });

  it("the unchanged spec loads", async () => {
    expect(buildModel(await loadSpec(join(REPO, "spec"))).reports?.factKeyVersion).toBe(1);
  });
});
