/**
 * The generator: load → model → emit (one emitter per target) → write or check.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { emitClient } from "./emit/client.js";
import { emitCodelists } from "./emit/codelists.js";
import { emitDocs } from "./emit/docs.js";
import { emitErrors } from "./emit/errors.js";
import { emitIndex } from "./emit/index.js";
import { emitStubs } from "./emit/stubs.js";
import { emitTypes } from "./emit/types.js";
import { emitValidators } from "./emit/validators.js";
import { loadSpec } from "./load.js";
import { buildModel, type Model } from "./model.js";
import { defaultPaths, packageRoot, type GeneratorPaths } from "./paths.js";
import { loadTemplates, type Render } from "./templates.js";
import { staleFiles, withManifest, writeFiles, type GeneratedFile } from "./write.js";

/** One output target: what it writes, from the model, through its templates. */
export interface Emitter {
  name: string;
  emit(model: Model, render: Render): GeneratedFile[] | Promise<GeneratedFile[]>;
}

export const emitters: Emitter[] = [
  { name: "types", emit: emitTypes },
  { name: "validators", emit: emitValidators },
  { name: "codelists", emit: emitCodelists },
  { name: "errors", emit: emitErrors },
  { name: "stubs", emit: emitStubs },
  { name: "client", emit: emitClient },
  { name: "index", emit: emitIndex },
  { name: "docs", emit: emitDocs },
];

export interface GenerateResult {
  files: GeneratedFile[];
  model: Model;
  /** Files that were stale before this run (check mode) or rewritten (write mode). */
  stale: string[];
  written: number;
  removed: number;
  seconds: number;
}

/** Regenerates everything in memory; writes it unless `check` is set. */
export async function generate(
  options: Partial<GeneratorPaths> & { check?: boolean; onProgress?: (step: string) => void } = {},
): Promise<GenerateResult> {
  const started = performance.now();
  const paths = { ...defaultPaths(), ...options };
  const progress = options.onProgress ?? (() => {});
  progress("loading spec/");
  const spec = await loadSpec(paths.spec);
  const model = buildModel(spec);
  const templates = await loadTemplates(paths.templates);
  const files: GeneratedFile[] = [];
  for (const emitter of emitters) {
    progress(`emitting ${emitter.name}`);
    files.push(...(await emitter.emit(model, templates.render)));
  }
  const templatesHash = createHash("sha256");
  for (const t of templates.files) templatesHash.update(t.path).update("\0").update(t.text).update("\0");
  const pkg = JSON.parse(await readFile(`${packageRoot()}/package.json`, "utf8"));
  const all = withManifest(files, { specHash: model.specHash, templatesHash: templatesHash.digest("hex"), generatorVersion: pkg.version });
  const stale = await staleFiles(paths.out, all);
  let written = 0;
  let removed = 0;
  if (!options.check && stale.length > 0) {
    progress("writing generated/");
    ({ written, removed } = await writeFiles(paths.out, all));
  }
  return { files: all, model, stale, written, removed, seconds: (performance.now() - started) / 1000 };
}
