// The TypeScript samples of the docs site compile against the bindings (@adxkit/bindings): the client
// factories and methods they call exist, the example payloads they pass are of the right types,
// and what they read from the answers is there. Type-checked with the TypeScript compiler API
// and the project's own compiler options.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { samplesOf } from "../../generator/emit/docs/samples.js";
import { buildSite, payloadSchema } from "../../generator/emit/docs/site.js";
import { packageRoot } from "../../generator/paths.js";
import { emittedSite } from "./site.js";

const REPO = packageRoot();
let dir: string;
let files: { name: string; operation: string; example: string }[];

beforeAll(async () => {
  const { model } = await emittedSite();
  const site = buildSite(model);
  dir = await mkdtemp(join(tmpdir(), "adxkit-samples-"));
  files = [];
  for (const o of site.operations) {
    for (const example of payloadSchema(o.op, site)?.examples ?? []) {
      const sample = samplesOf(o, example.value, site).find((s) => s.id === "typescript");
      if (!sample) continue;
      // .mts: an ES module whatever package.json says beside it (the samples use top-level await).
      const name = `${o.op.operationId}--${example.name}.mts`;
      await writeFile(join(dir, name), sample.code);
      files.push({ name, operation: o.op.operationId, example: example.name });
    }
  }
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("TypeScript samples", () => {
  it("there is one for every example of the report and bidding operations", () => {
    expect(new Set(files.map((f) => f.operation))).toEqual(new Set(["auction", "bid", "getDemandReport", "postDemandReport", "postSupplyReport"]));
  });

  // A whole TypeScript program over the generated bindings: its own timeout on a busy machine.
  it("type-check with the project's compiler options against the generated bindings", { timeout: 240_000 }, () => {
    // The project's options, its tsconfig paths included: @adxkit/bindings resolves to generated/.
    const config = ts.readConfigFile(join(REPO, "tsconfig.json"), ts.sys.readFile).config;
    const { options } = ts.parseJsonConfigFileContent(config, ts.sys, REPO);
    const program = ts.createProgram(
      files.map((f) => join(dir, f.name)),
      { ...options, noEmit: true, rootDir: undefined, outDir: undefined, declaration: false, typeRoots: [join(REPO, "node_modules", "@types")] },
    );
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : "";
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    });
    expect(problems).toEqual([]);
  });
});
