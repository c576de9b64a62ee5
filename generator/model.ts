/**
 * Pass 2: normalise the loaded spec into one plain-JSON model. Every emitter reads only this
 * model, so a fact of the spec is interpreted in one place.
 */
import { createHash } from "node:crypto";
import { SpecError, type LoadedSpec } from "./load.js";
import { implementedRules, rules as ruleImplementations } from "@adxkit/bindings/runtime";
import { basesOf, type FieldModel } from "./fields.js";
import { expandQueryParameters } from "./query-parameters.js";
import { lenientPolicy } from "./lenient.js";
import { buildReportModel, type ReportModel } from "./report-model.js";
import { expandReportSchemas } from "./report-schemas.js";
import { checkRuleStatuses } from "./rule-statuses.js";
import { buildErrors, type ErrorsModel } from "./errors-model.js";
import { serveOptionsOf, type ServeOptionModel } from "./serve-options.js";
import { auctionRulesOf, billingTokenFormatsOf, type AuctionRulesModel, type BillingTokenFormatsModel } from "./auction-rules.js";
import { collectChoices, reachableSchemas, recommendedTree, resolveFields, schemaIndex, walkSchema, type RecommendedNode } from "./schema-walk.js";
import { componentize, componentsOf, operationsOf, serversOf, type ComponentModel, type OperationModel, type ServerModel } from "./operations.js";

export type * from "./report-model.js";
export type { FieldModel } from "./fields.js";
export type { ComponentModel, OperationModel, ParameterModel, ResponseModel, ServerModel } from "./operations.js";
export type { ErrorsModel, NamedRuleModel, ReportStatusModel } from "./errors-model.js";
export type { ServeOptionModel } from "./serve-options.js";
export type { AuctionRulesModel } from "./auction-rules.js";
export type { RecommendedNode } from "./schema-walk.js";
export { walkSchema } from "./schema-walk.js";

export interface CodelistValue {
  code: number | string;
  key: string;
  label: string;
  deprecated: boolean;
  /** Other texts that name this value exactly (case-insensitive), e.g. device.os spellings. */
  aliases?: string[];
  /** Text prefixes that name this value ("roku" for "Roku OS 11"). */
  prefixes?: string[];
}

export interface CodelistModel {
  /** kebab-case id, the file name without `.yaml`. */
  id: string;
  name: string;
  title: string;
  description: string;
  source: string;
  type: "integer" | "string";
  open?: { minimum: number; description: string };
  values: CodelistValue[];
}


export interface RuleModel {
  id: string;
  description: string;
}

export interface SchemaModel {
  id: string;
  $id: string;
  specPath: string;
  title: string;
  description: string;
  schema: Record<string, any>;
  /** Ids of the objects this one extends (`allOf` / top-level `$ref`); their fields are in `fields` too. */
  bases: string[];
  /** Every field, inherited ones included, each followed by the rows of the inline objects below it. */
  fields: FieldModel[];
  rules: RuleModel[];
  choices: string[];
  /** Example payloads of spec/examples/<id>/, by file name. */
  examples: { name: string; value: unknown }[];
}


export interface ValidatorModel {
  kind: string;
  functionName: string;
  typeName: string;
  schemaId: string;
  /** Rule ids implemented in runtime/rules.ts that apply to this kind, in a stable order. */
  codeRules: string[];
  /** One id per distinct implementation of those rules (a function may check several): what to call. */
  ruleCalls: string[];
  /** True when the kind takes the request it answers (cross-checks). */
  takesRequest: boolean;
  /** A wrapper property accepted around the document (Native 1.0's `{"native": {...}}`). */
  unwrap?: string;
  /** The fields marked `x-recommended` reachable from the root, as a tree (absent when none). */
  recommended?: RecommendedNode;
}


export interface ApiModel {
  id: string;
  specPath: string;
  title: string;
  description: string;
  /** The interface's letter in the interface document (A, B, C), written at the end of its title. */
  letter?: string;
  version: string;
  /** `info.x-adxkit-choice`: what adxkit chose where the interface document is silent. */
  choice?: string;
  servers: ServerModel[];
  /** The self-contained document (spec/schemas files moved into components.schemas). */
  document: Record<string, any>;
  operations: OperationModel[];
  webhooks: OperationModel[];
  /** Response bodies the document declares itself (not spec/schemas files). */
  components: ComponentModel[];
  /** The substitution macros the document declares (`components.x-macros`). */
  macros: MacroModel[];
}

/** A substitution macro of part 2.7 (spec/openapi/bidding.yaml, components.x-macros). */
export interface MacroModel {
  macro: string;
  /** Name of the value it is replaced with, as the exchange calls it. */
  field: string;
  source: string;
}

/** Names of the parameters marked `x-adxkit-secret`, by where they travel, sorted. */
export interface SecretParametersModel {
  query: string[];
  header: string[];
}

export interface Model {
  macros: MacroModel[];
  secretParameters: SecretParametersModel;
  auctionRules?: AuctionRulesModel;
  /** The billing token's formats (`x-adxkit-token-formats`), when the spec has a billing operation. */
  billingTokenFormats?: BillingTokenFormatsModel;
  /** The options of `adxkit serve` (spec/schemas/serve-options.yaml), when the spec has them. */
  serveOptions?: ServeOptionModel[];
  codelists: CodelistModel[];
  schemas: SchemaModel[];
  validators: ValidatorModel[];
  errors: ErrorsModel;
  apis: ApiModel[];
  /** The report model (spec/report-model.yaml), when the spec has report interfaces. */
  reports?: ReportModel;
  /** Raw spec files, for the downloadable copies in the docs site. */
  sources: { specPath: string; text: string }[];
  /** Hash of every spec file, recorded in the manifest. */
  specHash: string;
}

/** A spec file's id: its name without `.yaml`. */
const fileId = (file: string) => file.replace(/\.yaml$/, "");

/** Builds the model, failing once with every inconsistency between files. */
export function buildModel(spec: LoadedSpec): Model {
  const problems: string[] = [];
  const codelists = spec.codelists.map((file): CodelistModel => {
    const d = file.data;
    return {
      id: fileId(file.file),
      name: d.name,
      title: d.title ?? d.name,
      description: d.description ?? "",
      source: d.source ?? "",
      type: d.type,
      open: d.open ? { minimum: d.open.minimum, description: d.open.description ?? "" } : undefined,
      values: d.values.map((v: any) => ({
        code: v.code,
        key: v.key,
        label: v.label,
        deprecated: v.deprecated === true,
        ...(v.aliases ? { aliases: v.aliases.map(String) } : {}),
        ...(v.prefixes ? { prefixes: v.prefixes.map(String) } : {}),
      })),
    };
  });
  const codelistIds = new Set(codelists.map((c) => c.id));
  const reports = spec.reportModel ? buildReportModel(spec.reportModel.data, codelistIds, problems) : undefined;
  // The expansions below read the report model's names: stop here when they are not all declared.
  if (problems.length) throw new SpecError(problems);
  const schemaFiles = expandReportSchemas(spec.schemas, reports, problems);
  const openapiFiles = expandQueryParameters(spec.openapi, schemaFiles, problems);
  const errors = buildErrors(spec.errors.data, problems);
  const namedRules = new Map(errors.namedRules.map((r) => [r.id, r]));
  for (const rejection of errors.auctionRejections) {
    for (const rule of rejection.rules) if (!namedRules.has(rule)) problems.push(`errors.yaml: auction-rejections ${rejection.id} names rule ${rule}, which validation-rules does not declare`);
  }
  // x-max-length names a limit of the report model (spec/report-model.yaml limits).
  const limits: Record<string, unknown> = spec.reportModel?.data?.limits ?? {};

  const byFile = new Map(schemaFiles.map((s) => [s.file, s]));
  const index = schemaIndex(schemaFiles.map((s) => ({ id: fileId(s.file), title: s.data?.title })));
  const schemas = schemaFiles.map((file): SchemaModel => {
    const schema = file.data;
    const where = file.specPath;
    walkSchema(schema, (node, at) => {
      for (const key of Object.keys(node)) {
        if (key.startsWith("x-") && !knownExtensions.has(key)) problems.push(`${where}${at}: unknown extension ${key}`);
      }
      if (node["x-codelist"] !== undefined && !codelistIds.has(node["x-codelist"])) {
        problems.push(`${where}${at}: x-codelist ${node["x-codelist"]} names no file in spec/codelists/`);
      }
      if (typeof node.$ref === "string" && !node.$ref.startsWith("#") && !byFile.has(node.$ref)) {
        problems.push(`${where}${at}: $ref ${node.$ref} names no file in spec/schemas/`);
      }
      if (node["x-lenient"] !== undefined) lenientPolicy(node["x-lenient"], `${where}${at}: x-lenient`, problems);
      if (node["x-rule"] !== undefined && !namedRules.has(node["x-rule"])) {
        problems.push(`${where}${at}: x-rule ${node["x-rule"]} is not declared in errors.yaml validation-rules.named`);
      }
      // x-max-length names a limit of report-model.yaml limits: that number becomes the field's
      // maxLength here, before any emitter reads the schema (validators, types, docs).
      if (node["x-max-length"] !== undefined) {
        const limit = limits[node["x-max-length"]];
        if (!Number.isInteger(limit)) problems.push(`${where}${at}: x-max-length ${node["x-max-length"]} names no integer of report-model.yaml limits`);
        else if (node.maxLength !== undefined) problems.push(`${where}${at}: x-max-length and maxLength together; write only x-max-length`);
        else node.maxLength = limit;
      }
    });
    const rules: RuleModel[] = (schema["x-rules"] ?? []).map((r: any) => ({ id: r.id, description: r.description ?? "" }));
    for (const rule of rules) {
      if (!namedRules.has(rule.id)) problems.push(`${where}: x-rules ${rule.id} is not declared in errors.yaml`);
    }
    return {
      id: fileId(file.file),
      $id: schema.$id,
      specPath: file.specPath,
      title: schema.title,
      description: schema.description ?? "",
      schema,
      bases: basesOf(schema, index),
      fields: [],
      rules,
      choices: collectChoices(schema),
      examples: spec.examples
        .filter((e) => e.specPath.startsWith(`examples/${fileId(file.file)}/`))
        .map((e) => ({ name: e.file.replace(/\.json$/, ""), value: e.data })),
    };
  });

  resolveFields(schemas, index);

  const schemaIds = new Set(schemaFiles.map((s) => fileId(s.file)));
  for (const e of spec.examples) {
    const folder = e.specPath.split("/")[1];
    if (!schemaIds.has(folder)) problems.push(`${e.specPath}: examples/${folder}/ names no schema of spec/schemas/`);
  }

  // Every declared rule is enforced either by a schema keyword (x-rule) or by code, never by neither.
  const ruleInSchema = new Set<string>();
  for (const s of schemas) walkSchema(s.schema, (node) => node["x-rule"] && ruleInSchema.add(node["x-rule"]));
  for (const s of schemas) {
    for (const rule of s.rules) {
      if (!ruleInSchema.has(rule.id) && !implementedRules.has(rule.id)) {
        problems.push(`${s.specPath}: rule ${rule.id} has no implementation in runtime/rules.ts and no x-rule keyword`);
      }
    }
  }

  const validators = schemas
    .filter((s) => typeof s.schema["x-validator"] === "string")
    .map((s): ValidatorModel => {
      const reachable = reachableSchemas(s.id, schemas);
      const codeRules = [...new Set(reachable.flatMap((r) => r.rules.map((rule) => rule.id)))].filter((id) => implementedRules.has(id)).sort();
      // A function that checks several rules in one pass runs once, and only where all of them apply.
      const calls = new Map<unknown, string>();
      for (const id of codeRules) {
        const implementation = ruleImplementations[id];
        if (calls.has(implementation)) continue;
        calls.set(implementation, id);
        const together = [...implementedRules].filter((other) => ruleImplementations[other] === implementation);
        const missing = together.filter((other) => !codeRules.includes(other));
        if (missing.length > 0) problems.push(`${s.specPath}: rule ${id} is checked in one pass with ${missing.join(", ")} (runtime/rules.ts), which this validator's schemas do not declare`);
      }
      return {
        kind: s.schema["x-validator"],
        functionName: `validate${s.title}`,
        typeName: s.title,
        schemaId: s.$id,
        codeRules,
        ruleCalls: [...calls.values()],
        takesRequest: s.schema["x-validator-takes-request"] === true,
        unwrap: s.schema["x-validator-unwrap"],
        recommended: recommendedTree(s.schema, byFile),
      };
    })
    .sort((a, b) => a.kind.localeCompare(b.kind));

  const apis = openapiFiles.map((file): ApiModel => {
    const doc = componentize(file.data, schemas);
    const title: string = doc.info?.title ?? file.file;
    const letter = /\(([A-Z])\)\s*$/.exec(title)?.[1];
    return {
      id: fileId(file.file),
      specPath: file.specPath,
      title,
      description: doc.info?.description ?? "",
      ...(letter ? { letter } : {}),
      version: doc.info?.version ?? "",
      ...(typeof doc.info?.["x-adxkit-choice"] === "string" ? { choice: doc.info["x-adxkit-choice"] } : {}),
      servers: serversOf(doc.servers),
      document: doc,
      operations: operationsOf(doc.paths ?? {}, index, { securitySchemes: doc.components?.securitySchemes, responses: doc.components?.responses }),
      webhooks: operationsOf(doc.webhooks ?? {}, index, { webhook: true }),
      components: componentsOf(doc, index),
      macros: macrosOf(file.data),
    };
  });

  const macros: MacroModel[] = openapiFiles.flatMap((file) => macrosOf(file.data));
  for (const m of macros) {
    if (!/^\$\{[A-Z_]+\}$/.test(m.macro ?? "") || typeof m.field !== "string" || typeof m.source !== "string") {
      problems.push(`openapi: x-macros entry ${JSON.stringify(m)} needs macro \${NAME}, field and source`);
    }
  }
  const auctionRules = auctionRulesOf(apis, problems);
  const billingTokenFormats = billingTokenFormatsOf(apis, problems);
  const secretNames = (where: string) =>
    [...new Set(apis.flatMap((a) => a.operations).flatMap((op) => op.parameters).filter((p) => p.secret && p.in === where).map((p) => p.name.toLowerCase()))].sort();
  const secretParameters = { query: secretNames("query"), header: secretNames("header") };
  const serveOptions = serveOptionsOf(schemas.find((s) => s.id === "serve-options"), problems);
  checkRuleStatuses(errors, apis, problems);
  if (problems.length) throw new SpecError(problems);
  const sources = [...spec.schemas, ...spec.codelists, ...spec.openapi, spec.errors, ...(spec.reportModel ? [spec.reportModel] : []), ...spec.examples]
    .map((f) => ({ specPath: f.specPath, text: f.text }))
    .sort((a, b) => a.specPath.localeCompare(b.specPath));
  const hash = createHash("sha256");
  for (const source of sources) hash.update(source.specPath).update("\0").update(source.text).update("\0");
  return { macros, secretParameters, auctionRules, ...(billingTokenFormats ? { billingTokenFormats } : {}), serveOptions, codelists, schemas, validators, errors, apis, ...(reports ? { reports } : {}), sources, specHash: hash.digest("hex") };
}


/** x- keywords the generator understands; any other is a typo and fails the load. */
export const knownExtensions = new Set([
  "x-recommended",
  "x-recommended-unless",
  "x-codelist",
  "x-rule",
  "x-rules",
  "x-validator",
  "x-validator-takes-request",
  "x-validator-unwrap",
  "x-adxkit-choice",
  "x-deprecated",
  "x-examples",
  "x-max-length",
  "x-adxkit-flag",
  "x-adxkit-env",
  "x-adxkit-secret",
  "x-lenient",
]);



const macrosOf = (document: Record<string, any>): MacroModel[] =>
  (document.components?.["x-macros"] ?? []).map((m: any) => ({ macro: m.macro, field: m.field, source: m.source }));


