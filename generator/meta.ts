/**
 * The spec's own meta-files (code lists, errors.yaml, report-model.yaml) checked against their
 * JSON Schemas (spec/meta/*.schema.yaml), so a typo fails the load naming the file and the path
 * inside it. A spec folder without meta/ (a test fixture) is checked against adxkit's own.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import Ajv2020Module, { type ErrorObject } from "ajv/dist/2020.js";
import { parse as parseYaml } from "yaml";
import { packageRoot } from "./paths.js";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;

/** The meta-schemas, by the kind of file they describe. */
export const META_FILES = { codelist: "codelist.schema.yaml", errors: "errors.schema.yaml", reportModel: "report-model.schema.yaml" } as const;
export type MetaKind = keyof typeof META_FILES;

/** Checks a parsed meta-file; pushes `<file>: <path>: <message>` problems. */
export type MetaCheck = (kind: MetaKind, specPath: string, data: unknown, problems: string[]) => void;

/** One readable line per failure; the summaries of combinators are dropped when a deeper error explains them. */
function describe(errors: ErrorObject[]): string[] {
  const summaries = new Set(["if", "oneOf", "anyOf", "allOf", "not"]);
  const detailed = errors.filter((e) => !summaries.has(e.keyword));
  const shown = detailed.length > 0 ? detailed : errors;
  const lines = shown.map((e) => {
    const at = e.instancePath || "/";
    if (e.keyword === "additionalProperties") return `${at}: unknown property ${JSON.stringify(e.params.additionalProperty)}`;
    if (e.keyword === "enum") return `${at}: must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    if (e.keyword === "required") return `${at}: missing property ${JSON.stringify(e.params.missingProperty)}`;
    return `${at}: ${e.message}`;
  });
  return [...new Set(lines)];
}

/** Loads the meta-schemas of `specDir/meta` (or adxkit's own) and returns the checker. */
export async function loadMetaCheck(specDir: string): Promise<MetaCheck> {
  const own = join(specDir, "meta");
  const dir = existsSync(own) ? own : join(packageRoot(), "spec", "meta");
  const ajv = new Ajv2020({ allErrors: true, strictSchema: true, strictTypes: false, strictRequired: false, allowUnionTypes: true });
  const validators = new Map<MetaKind, ReturnType<typeof ajv.compile>>();
  for (const [kind, file] of Object.entries(META_FILES) as [MetaKind, string][]) {
    validators.set(kind, ajv.compile(parseYaml(await readFile(join(dir, file), "utf8"))));
  }
  return (kind, specPath, data, problems) => {
    const validate = validators.get(kind)!;
    if (!validate(data)) for (const line of describe(validate.errors ?? [])) problems.push(`${specPath}: ${line}`);
  };
}
