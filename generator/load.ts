/**
 * Pass 1: read spec/ from disk and check it. Every problem is collected with its file and
 * path, then reported at once, so one run shows everything that is wrong.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import { parse as parseYaml } from "yaml";
import { loadMetaCheck, type MetaCheck } from "./meta.js";

export interface LoadedFile<T> {
  /** File name relative to its folder, e.g. `imp.yaml`. */
  file: string;
  /** Path relative to spec/, e.g. `schemas/imp.yaml`. */
  specPath: string;
  text: string;
  data: T;
}

export interface LoadedSpec {
  /** spec/examples/<schema id>/<name>.json: example payloads, validated by the tests. */
  examples: LoadedFile<unknown>[];
  schemas: LoadedFile<Record<string, any>>[];
  codelists: LoadedFile<Record<string, any>>[];
  openapi: (LoadedFile<Record<string, any>> & { bundled: Record<string, any> })[];
  errors: LoadedFile<Record<string, any>>;
  /** spec/report-model.yaml, when the spec has report interfaces. */
  reportModel?: LoadedFile<Record<string, any>>;
}

/** All problems of a spec, thrown once. */
export class SpecError extends Error {
  constructor(readonly problems: string[]) {
    super(`spec/ has ${problems.length} problem(s):\n  - ${problems.join("\n  - ")}`);
    this.name = "SpecError";
  }
}

async function yamlFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names.filter((name) => name.endsWith(".yaml")).sort();
}

async function readYaml(specDir: string, sub: string, file: string, problems: string[]): Promise<LoadedFile<any> | undefined> {
  const full = join(specDir, sub, file);
  const text = await readFile(full, "utf8");
  try {
    return { file, specPath: sub ? `${sub}/${file}` : file, text, data: parseYaml(text) };
  } catch (error) {
    problems.push(`${sub}/${file}: not valid YAML: ${(error as Error).message.split("\n")[0]}`);
    return undefined;
  }
}

/** Reads and checks the whole spec folder. */
export async function loadSpec(specDir: string): Promise<LoadedSpec> {
  const problems: string[] = [];
  const load = async (sub: string) => {
    const files = await yamlFiles(join(specDir, sub));
    const loaded = await Promise.all(files.map((file) => readYaml(specDir, sub, file, problems)));
    return loaded.filter((x): x is LoadedFile<any> => x !== undefined);
  };
  const [schemas, codelists, openapiFiles] = await Promise.all([load("schemas"), load("codelists"), load("openapi")]);
  const errors = await readYaml(specDir, "", "errors.yaml", problems);
  const reportModel = existsSync(join(specDir, "report-model.yaml")) ? await readYaml(specDir, "", "report-model.yaml", problems) : undefined;
  // The meta-files' shapes first: the checks below and the model read them as their schemas say.
  const checkMeta = await loadMetaCheck(specDir);
  if (errors) checkMeta("errors", errors.specPath, errors.data, problems);
  if (reportModel) checkMeta("reportModel", reportModel.specPath, reportModel.data, problems);

  for (const schema of schemas) {
    const expectedId = `https://adxkit.dev/schemas/${schema.file}`;
    if (schema.data?.$id !== expectedId) problems.push(`${schema.specPath}: $id must be ${expectedId}`);
    if (typeof schema.data?.title !== "string" || !/^[A-Z][A-Za-z0-9]*$/.test(schema.data.title)) {
      problems.push(`${schema.specPath}: title must be a PascalCase type name`);
    }
  }
  for (const list of codelists) checkCodelist(list, checkMeta, problems);

  // swagger-parser validates against the OpenAPI 3.1 schema and resolves the relative $refs into spec/schemas.
  const openapi = [];
  for (const doc of openapiFiles) {
    const full = join(specDir, doc.specPath);
    try {
      await SwaggerParser.validate(full);
      const bundled = (await SwaggerParser.bundle(full)) as Record<string, any>;
      openapi.push({ ...doc, bundled });
    } catch (error) {
      problems.push(`${doc.specPath}: ${(error as Error).message.split("\n").slice(0, 3).join(" ")}`);
    }
  }
  const examples = await loadExamples(specDir, problems);
  if (problems.length) throw new SpecError(problems);
  return { examples, schemas, codelists, openapi, errors: errors!, ...(reportModel ? { reportModel } : {}) };
}

async function loadExamples(specDir: string, problems: string[]): Promise<LoadedFile<unknown>[]> {
  const root = join(specDir, "examples");
  let folders: string[];
  try {
    folders = (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch {
    return [];
  }
  const out: LoadedFile<unknown>[] = [];
  for (const folder of folders) {
    for (const file of (await readdir(join(root, folder))).filter((n) => n.endsWith(".json")).sort()) {
      const specPath = `examples/${folder}/${file}`;
      const text = await readFile(join(root, folder, file), "utf8");
      try {
        out.push({ file, specPath, text, data: JSON.parse(text) });
      } catch (error) {
        problems.push(`${specPath}: not JSON: ${(error as Error).message}`);
      }
    }
  }
  return out;
}

/** A code list's shape is its meta-schema's; what a schema cannot say (unique codes and keys) is checked here. */
function checkCodelist(list: LoadedFile<any>, checkMeta: MetaCheck, problems: string[]): void {
  const before = problems.length;
  checkMeta("codelist", list.specPath, list.data, problems);
  if (problems.length > before) return;
  const codes = new Set<unknown>();
  const keys = new Set<string>();
  list.data.values.forEach((value: any, index: number) => {
    const at = `${list.specPath}: /values/${index}`;
    if (codes.has(value.code)) problems.push(`${at}: duplicate code ${value.code}`);
    if (keys.has(value.key)) problems.push(`${at}: duplicate key ${value.key}`);
    codes.add(value.code);
    keys.add(value.key);
  });
}
