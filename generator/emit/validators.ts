/**
 * Validators target: ajv standalone code, precompiled twice from the same schemas — a fast
 * validator (stops at the first error) and a diagnostic one (all errors, with the failing
 * schema, so each issue gets its rule id) — wrapped with the rules written in code.
 */
import Ajv2020Module from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import { _, stringify, type KeywordCxt } from "ajv";
import type { Model } from "../model.js";
import { knownExtensions } from "../model.js";
import { formats } from "../runtime/formats.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const standaloneCode = standaloneModule.default ?? standaloneModule;

/** Creates an ajv instance that knows the spec's keywords and formats and produces ESM source. */
export function createAjv(model: Model, diagnostic: boolean) {
  const ajv = new Ajv2020({
    strict: true,
    allErrors: diagnostic,
    verbose: diagnostic,
    // Integers above 2^53 and other numbers are compared as JS numbers; no coercion, no defaults.
    coerceTypes: false,
    useDefaults: false,
    allowUnionTypes: true,
    code: { source: true, esm: true, formats: _`formats`, lines: false },
  });
  const lists = new Map(model.codelists.map((list) => [list.id, list]));
  for (const keyword of knownExtensions) {
    if (keyword === "x-codelist") continue;
    ajv.addKeyword({ keyword });
  }
  // x-codelist checks membership with a Set built once per list; open lists also accept their range.
  ajv.addKeyword({
    keyword: "x-codelist",
    schemaType: "string",
    error: {
      message: ({ schema }) => _`"must be a code of the " + ${schema} + " list"`,
      params: ({ schema }) => _`{list: ${schema}}`,
    },
    code(cxt: KeywordCxt) {
      const { gen, data, schema } = cxt;
      const list = lists.get(schema as string)!;
      const codes = list.values.map((v) => v.code);
      const set = gen.scopeValue("keyword", { key: `codelist:${list.id}`, ref: new Set(codes), code: _`new Set(${stringify(codes)})` });
      if (list.open) {
        cxt.fail(_`!${set}.has(${data}) && !(typeof ${data} == "number" && ${data} >= ${list.open.minimum})`);
      } else {
        cxt.fail(_`!${set}.has(${data})`);
      }
    },
  });
  for (const [name, definition] of Object.entries(formats)) ajv.addFormat(name, definition);
  for (const schema of model.schemas) ajv.addSchema(schema.schema);
  return ajv;
}

/**
 * ajv's standalone ESM output may still call require() (ajv issue 1976): hoist each into an import.
 * The required modules are ajv's CommonJS runtime helpers (ucs2length for minLength/maxLength,
 * equal, …), read as `require(…).default`. Node gives a default import of CommonJS its
 * module.exports; vitest and tsx give exports.default when __esModule is set: both are accepted.
 */
export function toEsm(code: string, formatsImport: string): string {
  const imports: string[] = [`import { formats } from ${JSON.stringify(formatsImport)};`];
  const interop: string[] = [];
  const names = new Map<string, string>();
  const body = code.replace(/require\("([^"]+)"\)/g, (_m, specifier: string) => {
    let name = names.get(specifier);
    if (!name) {
      name = `imported${names.size}`;
      names.set(specifier, name);
      imports.push(`import ${name}Module from ${JSON.stringify(specifier.endsWith(".js") ? specifier : `${specifier}.js`)};`);
      interop.push(`const ${name} = ${name}Module && ${name}Module.__esModule ? ${name}Module : { default: ${name}Module };`);
    }
    return name;
  });
  return `${[...imports, ...interop].join("\n")}\n${body}\n`;
}

const exportName = (kind: string) => kind.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

export function emitValidators(model: Model, render: Render): GeneratedFile[] {
  const refs = Object.fromEntries(model.validators.map((v) => [exportName(v.kind), v.schemaId]));
  const formatsImport = "../../generator/runtime/formats.js";
  const source = (diagnostic: boolean) => toEsm(standaloneCode(createAjv(model, diagnostic), refs), formatsImport);

  const keywordRules: Record<string, string> = {};
  for (const rule of model.errors.validationRules) for (const keyword of rule.keywords) keywordRules[keyword] = rule.id;
  const lenientRules = ["codelist", ...model.errors.namedRules.filter((r) => r.severity === "lenient-warning").map((r) => r.id)].sort();

  const view = {
    validators: model.validators.map((v) => ({ ...v, exportName: exportName(v.kind) })),
    typeNames: [...new Set(model.validators.map((v) => v.typeName))].sort(),
    keywordRules,
    lenientRules,
    embedded: model.validators.filter((v) => v.kind.startsWith("native-")).map((v) => ({ kind: v.kind, exportName: exportName(v.kind) })),
  };
  return [
    { path: "validators/fast.ts", contents: render("validators/compiled", { description: "fast: stops at the first error", code: source(false) }) },
    { path: "validators/diagnose.ts", contents: render("validators/compiled", { description: "diagnostic: every error, with its schema", code: source(true) }) },
    { path: "validators/index.ts", contents: render("validators/index", view) },
  ];
}
