/**
 * Validators target: ajv standalone code, precompiled twice from the same schemas — a fast
 * validator (stops at the first error) and a diagnostic one (all errors, with the failing
 * schema, so each issue gets its rule id) — wrapped with the rules written in code.
 */
import Ajv2020Module from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import { _, str, stringify, type KeywordCxt, type KeywordDefinition } from "ajv";
import { useFunc } from "ajv/dist/compile/util.js";
import ucs2lengthModule from "ajv/dist/runtime/ucs2length.js";
import type { Model } from "../model.js";
import { knownExtensions } from "../model.js";
import { formats } from "@adxkit/bindings/runtime";
import type { Render } from "../templates.js";
import { recommendedSource } from "./recommended.js";
import type { GeneratedFile } from "../write.js";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const standaloneCode = standaloneModule.default ?? standaloneModule;
const ucs2length = ucs2lengthModule.default ?? ucs2lengthModule;

/** How createAjv compiles; the defaults are the precompiled validators'. */
export interface AjvSetup {
  /** ajv's own minLength and maxLength (a code point count of every string): the bench's "plain ajv". */
  ajvLengths?: boolean;
}

/** Creates an ajv instance that knows the spec's keywords and formats and produces ESM source. */
export function createAjv(model: Model, diagnostic: boolean, setup: AjvSetup = {}) {
  const ajv = new Ajv2020({
    strict: true,
    allErrors: diagnostic,
    verbose: diagnostic,
    // Integers above 2^53 and other numbers are compared as JS numbers; no coercion, no defaults.
    coerceTypes: false,
    useDefaults: false,
    allowUnionTypes: true,
    // The fast validator's errors are never read (a failure reruns the diagnostic one): no message texts.
    messages: diagnostic,
    code: { source: true, esm: false, formats: _`formats`, lines: false },
  });
  const lists = new Map(model.codelists.map((list) => [list.id, list]));
  for (const keyword of knownExtensions) {
    if (keyword === "x-codelist") continue;
    ajv.addKeyword({ keyword });
  }
  /** A Set of codes, built once per list in the generated code. */
  const codeSet = (gen: KeywordCxt["gen"], key: string, codes: (number | string)[]) =>
    gen.scopeValue("keyword", { key, ref: new Set(codes), code: _`new Set(${stringify(codes)})` });
  // x-codelist checks membership with a Set built once per list; open lists also accept their
  // range. Deprecated codes fail too (a warning, rule deprecated): the valid path stays one lookup.
  ajv.addKeyword({
    keyword: "x-codelist",
    schemaType: "string",
    error: {
      message: ({ schema }) => _`"must be a code of the " + ${schema} + " list"`,
      params: ({ schema, data, gen }) => {
        const list = lists.get(schema as string)!;
        const deprecated = list.values.filter((v) => v.deprecated).map((v) => v.code);
        if (!diagnostic || deprecated.length === 0) return _`{list: ${schema}}`;
        return _`{list: ${schema}, deprecated: ${codeSet(gen, `deprecated:${list.id}`, deprecated)}.has(${data})}`;
      },
    },
    code(cxt: KeywordCxt) {
      const { gen, data, schema } = cxt;
      const list = lists.get(schema as string)!;
      const set = codeSet(gen, `codelist:${list.id}`, list.values.filter((v) => !v.deprecated).map((v) => v.code));
      if (list.open) {
        cxt.fail(_`!${set}.has(${data}) && !(typeof ${data} == "number" && ${data} >= ${list.open.minimum})`);
      } else {
        cxt.fail(_`!${set}.has(${data})`);
      }
    },
  });
  // A field marked deprecated fails wherever it is present: a warning (rule deprecated), found in the same run.
  ajv.removeKeyword("deprecated");
  ajv.addKeyword({
    keyword: "deprecated",
    schemaType: "boolean",
    error: { message: "is deprecated" },
    code(cxt: KeywordCxt) {
      if (cxt.schema === true) cxt.fail(_`true`);
    },
  });
  if (!setup.ajvLengths) {
    ajv.removeKeyword("minLength");
    ajv.removeKeyword("maxLength");
    ajv.addKeyword(lengthFirst);
  }
  for (const [name, definition] of Object.entries(formats)) ajv.addFormat(name, definition);
  for (const schema of model.schemas) ajv.addSchema(withoutProse(schema.schema) as Record<string, any>);
  return ajv;
}

/**
 * minLength and maxLength as ajv checks them (a string's length in code points, its errors and
 * messages), with the UTF-16 length compared first: a string has at least half as many code
 * points as UTF-16 units and at most as many, so the count is made only when it could decide.
 * ajv counts every string with a limit, and that loop was a fifth of a bid request's validation
 * in some runs (bench/validators.ts).
 */
const lengthFirst: KeywordDefinition = {
  keyword: ["maxLength", "minLength"],
  type: "string",
  schemaType: "number",
  error: {
    message: ({ keyword, schemaCode }) => str`must NOT have ${keyword === "maxLength" ? "more" : "fewer"} than ${schemaCode} characters`,
    params: ({ schemaCode }) => _`{limit: ${schemaCode}}`,
  },
  code(cxt: KeywordCxt) {
    const { keyword, data, schema, gen } = cxt;
    if (typeof schema !== "number") throw new Error(`${keyword} must be a number`);
    const count = useFunc(gen, ucs2length);
    cxt.fail(keyword === "maxLength" ? _`${data}.length > ${schema} && ${count}(${data}) > ${schema}` : _`${data}.length < ${2 * schema} && ${count}(${data}) < ${schema}`);
  },
};

/** Keywords whose values map names to subschemas: the names are data, not keywords. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);
/** Keywords whose values are data, never schemas. */
const DATA_KEYWORDS = new Set(["enum", "const", "default"]);
/** Prose the validators' code never reads; it stays in the JSON documents and on the docs site. */
const PROSE = new Set(["description", "examples", "x-examples", "$comment", "x-adxkit-choice"]);

/**
 * A schema without its prose, for ajv to compile: ajv's code carries whole schema objects (for
 * an enum beside them, and as each diagnostic error's parentSchema), and the descriptions were a
 * fifth of the validators' text, which every cold import parses. A deprecated field keeps its
 * description: the message of its warning quotes it (runtime/messages.ts).
 */
export function withoutProse(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutProse);
  if (node === null || typeof node !== "object") return node;
  const schema = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (PROSE.has(key) && !(key === "description" && schema.deprecated === true)) continue;
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === "object") out[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, withoutProse(child)]));
    else out[key] = withoutProse(value);
  }
  return out;
}

/**
 * ajv's standalone output calls require() for its CommonJS runtime helpers
 * (`require("ajv/dist/runtime/ucs2length").default` for minLength/maxLength). Each is replaced by
 * the bindings runtime's own export, so the validators need no package at run time; a helper
 * without a replacement fails the generation instead of shipping a dependency.
 */
const runtimeHelpers: Readonly<Record<string, string>> = { "ajv/dist/runtime/ucs2length": "ucs2length" };

/**
 * Turns ajv's CommonJS standalone code into an ES module whose validators are compiled on first
 * use: the code sits in a function that `load()` runs once. Importing the bindings then costs V8
 * only a pre-parse of it; a service that imports them for a code list never pays for the rest.
 */
export function toLazyModule(code: string, runtimeImport: string): string {
  const used = new Set<string>(["formats"]);
  const body = code.replace(/require\("([^"]+)"\)\.default/g, (_m, specifier: string) => {
    const name = runtimeHelpers[specifier.replace(/\.js$/, "")];
    if (!name) throw new Error(`ajv's standalone code requires ${specifier}, which the bindings runtime does not provide (add it to runtime/ and to runtimeHelpers)`);
    used.add(name);
    return name;
  });
  if (/\brequire\(/.test(body)) throw new Error("ajv's standalone code calls require() in a form toLazyModule does not know");
  return [
    `import { ${[...used].sort().join(", ")} } from ${JSON.stringify(runtimeImport)};`,
    "let compiled;",
    "/** The compiled validators by kind, built on the first call. */",
    "export function load() {",
    "  if (compiled !== undefined) return compiled;",
    "  const exports = {};",
    body,
    "  return (compiled = exports);",
    "}",
    "",
  ].join("\n");
}

/** Where generated code finds the runtime, wherever the bindings package is installed. */
const RUNTIME_IMPORT = "@adxkit/bindings/runtime";

const exportName = (kind: string) => kind.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

export function emitValidators(model: Model, render: Render): GeneratedFile[] {
  const refs = Object.fromEntries(model.validators.map((v) => [exportName(v.kind), v.schemaId]));
  const source = (diagnostic: boolean) => toLazyModule(standaloneCode(createAjv(model, diagnostic), refs), RUNTIME_IMPORT);

  const keywordRules: Record<string, string> = {};
  for (const rule of model.errors.validationRules) for (const keyword of rule.keywords) keywordRules[keyword] = rule.id;
  // The runtime needs the treatments only; the reasons stay in the spec and on the docs site.
  const lenientPolicies = Object.fromEntries(Object.entries(model.errors.lenientPolicies).map(([id, { why: _why, ...policy }]) => [id, policy]));
  const warningRules = [...model.errors.validationRules, ...model.errors.namedRules].filter((r) => r.severity === "warning").map((r) => r.id).sort();
  const ruleMessages = Object.fromEntries(model.errors.namedRules.filter((r) => r.message !== undefined).map((r) => [r.id, r.message!]));

  const view = {
    validators: model.validators.map((v) => ({ ...v, exportName: exportName(v.kind), recommendedCode: v.recommended ? recommendedSource(v.recommended) : undefined })),
    typeNames: [...new Set(model.validators.map((v) => v.typeName))].sort(),
    keywordRules,
    lenientPolicies,
    warningRules,
    ruleMessages,
    embedded: model.validators.filter((v) => v.kind.startsWith("native-")).map((v) => ({ kind: v.kind, exportName: exportName(v.kind) })),
  };
  const exportNames = model.validators.map((v) => exportName(v.kind));
  const compiled = (name: string, description: string, diagnostic: boolean): GeneratedFile[] => [
    { path: `validators/${name}.js`, contents: render("validators/compiled", { description, code: source(diagnostic) }) },
    { path: `validators/${name}.d.ts`, contents: render("validators/compiled-types", { description, exportNames }) },
  ];
  return [
    ...compiled("fast", "fast: stops at the first error", false),
    ...compiled("diagnose", "diagnostic: every error, with its schema", true),
    { path: "validators/index.ts", contents: render("validators/index", view) },
  ];
}
