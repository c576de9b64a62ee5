/**
 * The generator: load → model → emit (one emitter per target) → write or check. `generate` is the
 * one entry point: `npm run generate`, `adxkit generate` and `adxkit docs` all call it.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { emitClient } from "./emit/client.js";
import { emitCodelists } from "./emit/codelists.js";
import { emitDocs } from "./emit/docs.js";
import { emitDocuments } from "./emit/documents.js";
import { emitErrors } from "./emit/errors.js";
import { emitConfig } from "./emit/config.js";
import { emitIndex } from "./emit/index.js";
import { emitReports } from "./emit/reports.js";
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
  /** The folder of generated/ its files are in ("" when they are spread over several). */
  dir: string;
  emit(model: Model, render: Render): GeneratedFile[] | Promise<GeneratedFile[]>;
}

export const emitters: readonly Emitter[] = [
  { name: "types", dir: "types", emit: emitTypes },
  { name: "validators", dir: "validators", emit: emitValidators },
  { name: "codelists", dir: "codelists", emit: emitCodelists },
  { name: "errors", dir: "errors", emit: emitErrors },
  { name: "config", dir: "config", emit: emitConfig },
  { name: "reports", dir: "reports", emit: emitReports },
  { name: "stubs", dir: "stubs", emit: emitStubs },
  { name: "client", dir: "client", emit: emitClient },
  { name: "index", dir: "", emit: emitIndex },
  { name: "documents", dir: "", emit: emitDocuments },
  { name: "docs", dir: "docs", emit: emitDocs },
];

/** Names of the targets, for `--help` and usage errors. */
export const targetNames: readonly string[] = emitters.map((e) => e.name);

export interface GenerateOptions extends Partial<GeneratorPaths> {
  /**
   * Targets to emit (default: all). All targets make the generated/ tree with its manifest. One
   * target writes only its own folder's files, straight into `out` (`adxkit docs --out site/`).
   */
  targets?: readonly string[];
  /** Compare with what is on disk; write nothing. */
  check?: boolean;
  onProgress?: (step: string) => void;
}

export interface GenerateResult {
  files: GeneratedFile[];
  model: Model;
  /** Files that were stale before this run (check mode) or rewritten (write mode); all targets only. */
  stale: string[];
  written: number;
  removed: number;
  seconds: number;
}

/** Throws a RangeError naming the unknown targets. */
function selectEmitters(targets: readonly string[] | undefined): readonly Emitter[] {
  if (targets === undefined) return emitters;
  const unknown = targets.filter((t) => !targetNames.includes(t));
  if (unknown.length > 0) throw new RangeError(`unknown target(s) ${unknown.join(", ")}; expected ${targetNames.join(", ")}`);
  return emitters.filter((e) => targets.includes(e.name));
}

/** Regenerates the chosen targets in memory; writes them unless `check` is set. */
export async function generate(options: GenerateOptions = {}): Promise<GenerateResult> {
  const started = performance.now();
  const chosen = selectEmitters(options.targets);
  const whole = chosen.length === emitters.length;
  const defaults = defaultPaths();
  const paths: GeneratorPaths = { spec: options.spec ?? defaults.spec, templates: options.templates ?? defaults.templates, out: options.out ?? defaults.out };
  const progress = options.onProgress ?? (() => {});
  progress("loading spec/");
  const spec = await loadSpec(paths.spec);
  const model = buildModel(spec);
  const templates = await loadTemplates(paths.templates);
  let files: GeneratedFile[] = [];
  for (const emitter of chosen) {
    progress(`emitting ${emitter.name}`);
    const emitted = await emitter.emit(model, templates.render);
    // A single target is written as its own folder: its files lose the folder's prefix.
    const prefix = !whole && chosen.length === 1 && emitter.dir !== "" ? `${emitter.dir}/` : "";
    files.push(...emitted.map((f) => (prefix && f.path.startsWith(prefix) ? { ...f, path: f.path.slice(prefix.length) } : f)));
  }
  if (!whole) {
    let written = 0;
    if (!options.check) {
      progress(`writing ${paths.out}`);
      written = (await writeFiles(paths.out, files, { removeOthers: false })).written;
    }
    return { files, model, stale: [], written, removed: 0, seconds: (performance.now() - started) / 1000 };
  }
  const templatesHash = createHash("sha256");
  for (const t of templates.files) templatesHash.update(t.path).update("\0").update(t.text).update("\0");
  const pkg = JSON.parse(await readFile(`${packageRoot()}/package.json`, "utf8"));
  files = withManifest(files, { specHash: model.specHash, templatesHash: templatesHash.digest("hex"), generatorVersion: pkg.version });
  const stale = await staleFiles(paths.out, files);
  let written = 0;
  let removed = 0;
  if (!options.check && stale.length > 0) {
    progress("writing generated/");
    ({ written, removed } = await writeFiles(paths.out, files));
  }
  return { files, model, stale, written, removed, seconds: (performance.now() - started) / 1000 };
}
