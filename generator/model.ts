/**
 * Pass 2: normalise the loaded spec into one plain-JSON model. Every emitter reads only this
 * model, so a fact of the spec is interpreted in one place.
 */
import { createHash } from "node:crypto";
import { SpecError, type LoadedSpec } from "./load.js";
import { implementedRules, rules as ruleImplementations } from "@adxkit/bindings/runtime";
import { basesOf, mergeFields, ownFields, type FieldModel, type SchemaIndex } from "./fields.js";
import { expandQueryParameters } from "./query-parameters.js";
import { lenientPolicy, type LenientPolicyModel } from "./lenient.js";
import { buildReportModel, type ReportModel } from "./report-model.js";
import { expandReportSchemas } from "./report-schemas.js";
import { checkRuleStatuses } from "./rule-statuses.js";

export type * from "./report-model.js";

import { componentize, componentsOf, operationsOf, serversOf, type ComponentModel, type OperationModel, type ServerModel } from "./operations.js";

export type { FieldModel } from "./fields.js";
export type { ComponentModel, OperationModel, ParameterModel, ResponseModel, ServerModel } from "./operations.js";

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

/**
 * The recommended fields of a payload, as a tree that follows its shape: `fields` are
 * recommended where this node is present (unless one of the `unless` siblings is there),
 * `properties` and `items` lead to deeper nodes.
 */
export interface RecommendedNode {
  fields?: [name: string, unless?: string[]][];
  properties?: Record<string, RecommendedNode>;
  items?: RecommendedNode;
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

export interface ReportStatusModel {
  code: number;
  msg: string;
  name: string;
  appliesTo: string[];
  description: string;
}

export interface NamedRuleModel {
  id: string;
  description: string;
  /** The severity in strict mode (and in lenient mode when the rule declares no policy). */
  severity: "error" | "warning";
  /** The rule's treatment in lenient mode (errors.yaml `lenient`). */
  lenient?: LenientPolicyModel;
  appliesTo: string[];
  /** The message of the keyword failure this rule names (x-rule): `{field}`, `{value}`. */
  message?: string;
  /** The HTTP status its operations answer it with (rule-statuses.ts checks they declare it). */
  httpStatus?: number;
  /** The report status code a report request breaking it gets. */
  reportStatus?: number;
}

export interface ErrorsModel {
  reportStatus: ReportStatusModel[];
  precedence: number[];
  validationRules: { id: string; description: string; keywords: string[]; severity: "error" | "warning"; lenient?: LenientPolicyModel }[];
  namedRules: NamedRuleModel[];
  /** Each rule's lenient treatment, by rule id (kinds and named rules that declare one). */
  lenientPolicies: Record<string, LenientPolicyModel>;
  /** `rules`: the validation rules whose errors on a bid the exchange counts under this reason. */
  auctionRejections: { id: string; description: string; rules: string[] }[];
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

/** The exchange's numeric auction rules (bidding.yaml, the auction operation's x-adxkit-auction). */
export interface AuctionRulesModel {
  defaultTmaxMs: number;
  /** tmax is clamped into [minTmaxMs, maxTmaxMs]. */
  minTmaxMs: number;
  maxTmaxMs: number;
  exchangeMarginMs: number;
  exchangeMarginFraction: number;
  defaultAuctionType: number;
  priceIncrement: number;
  noticeAttempts: number;
  noticeBatchMs: number;
  noticeConnectionsPerOrigin: number;
  noticePipelining: number;
  /** Highest bid accepted, CPM in the reports' currency, unless configured otherwise. */
  maxBidCpm: number;
  /** A timeout counts against the circuit breaker only when the bidder had at least this long (or its timeout_ms). */
  breakerTimeoutFloorMs: number;
  /** An auction whose bidders would get less than this (after the unseen wait) is answered 204 at once, counted overloaded. */
  shedBelowMs: number;
  /** A request that arrives while the event loop is more than this behind is answered 204 before its body is read, counted overloaded. */
  shedLagMs: number;
  /** ...only while at least this many auctions run (fewer cannot have put the loop that far behind). */
  shedMinRunning: number;
  /** The auction's currency when the request has no cur (OpenRTB 2.5: USD). */
  defaultCurrency: string;
  /** The currency the reports record revenue in. */
  reportCurrency: string;
  /** The longest burl the exchange answers with; a winning bid whose sealed burl would be longer is dropped. */
  maxBurlLength: number;
}

/**
 * One option of `adxkit serve` (spec/schemas/serve-options.yaml): where it comes from and what
 * it takes. The CLI builds its flags, environment variables, defaults and --print-config from
 * these; the generated validateServeOptions checks the values.
 */
export interface ServeOptionModel {
  /** The property of ServeOptions. */
  name: string;
  /** The flag with its argument, e.g. "--port <port>"; absent for a secret. */
  flag?: string;
  /** Environment variables, the first one set wins. */
  env: string[];
  /** A secret: never on the command line, redacted when printed; also read from the file `${env}_FILE` names. */
  secret: boolean;
  /** The JSON Schema type(s) of the value. */
  type: string[];
  /** The choices of an enum, if any. */
  choices?: string[];
  default?: string | number | boolean;
  description: string;
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

const kebab = (file: string) => file.replace(/\.yaml$/, "");

/** Builds the model, failing once with every inconsistency between files. */
export function buildModel(spec: LoadedSpec): Model {
  const problems: string[] = [];
  const codelists = spec.codelists.map((file): CodelistModel => {
    const d = file.data;
    return {
      id: kebab(file.file),
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
  const index = schemaIndex(schemaFiles.map((s) => ({ id: kebab(s.file), title: s.data?.title })));
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
      id: kebab(file.file),
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
        .filter((e) => e.specPath.startsWith(`examples/${kebab(file.file)}/`))
        .map((e) => ({ name: e.file.replace(/\.json$/, ""), value: e.data })),
    };
  });

  resolveFields(schemas, index);

  const schemaIds = new Set(schemaFiles.map((s) => kebab(s.file)));
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
      id: kebab(file.file),
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
  const auction = apis.flatMap((a) => a.operations).map((op) => op.extensions["x-adxkit-auction"] as Record<string, unknown> | undefined).find(Boolean);
  let auctionRules: AuctionRulesModel | undefined;
  if (auction) {
    const number = (key: string) => {
      const value = auction[key];
      if (typeof value !== "number") problems.push(`openapi: x-adxkit-auction.${key} must be a number`);
      return value as number;
    };
    const currency = (key: string) => {
      const value = auction[key];
      if (typeof value !== "string" || !/^[A-Z]{3}$/.test(value)) problems.push(`openapi: x-adxkit-auction.${key} must be an ISO 4217 alpha code`);
      return value as string;
    };
    auctionRules = {
      defaultTmaxMs: number("default-tmax-ms"),
      exchangeMarginMs: number("exchange-margin-ms"),
      exchangeMarginFraction: number("exchange-margin-fraction"),
      defaultAuctionType: number("default-auction-type"),
      priceIncrement: number("price-increment"),
      noticeAttempts: number("notice-attempts"),
      noticeBatchMs: number("notice-batch-ms"),
      noticeConnectionsPerOrigin: number("notice-connections-per-origin"),
      noticePipelining: number("notice-pipelining"),
      minTmaxMs: number("min-tmax-ms"),
      maxTmaxMs: number("max-tmax-ms"),
      maxBidCpm: number("max-bid-cpm"),
      breakerTimeoutFloorMs: number("breaker-timeout-floor-ms"),
      shedBelowMs: number("shed-below-ms"),
      shedLagMs: number("shed-lag-ms"),
      shedMinRunning: number("shed-min-running"),
      defaultCurrency: currency("default-currency"),
      reportCurrency: currency("report-currency"),
      maxBurlLength: number("max-burl-length"),
    };
  }
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
  return { macros, secretParameters, auctionRules, serveOptions, codelists, schemas, validators, errors, apis, ...(reports ? { reports } : {}), sources, specHash: hash.digest("hex") };
}

/** The options table of spec/schemas/serve-options.yaml; every option needs a flag or, for a secret, a variable. */
function serveOptionsOf(schema: SchemaModel | undefined, problems: string[]): ServeOptionModel[] | undefined {
  if (schema === undefined) return undefined;
  return Object.entries<any>(schema.schema.properties ?? {}).map(([name, node]): ServeOptionModel => {
    const secret = node["x-adxkit-secret"] === true;
    const env: unknown = node["x-adxkit-env"] ?? [];
    if (!Array.isArray(env) || !env.every((e) => typeof e === "string" && /^[A-Z][A-Z0-9_]*$/.test(e))) problems.push(`${schema.specPath}: ${name}: x-adxkit-env must list variable names`);
    if (secret ? node["x-adxkit-flag"] !== undefined || (env as string[]).length === 0 : typeof node["x-adxkit-flag"] !== "string") {
      problems.push(`${schema.specPath}: ${name}: ${secret ? "a secret has variables (x-adxkit-env) and no flag" : "needs x-adxkit-flag"}`);
    }
    return {
      name,
      ...(secret ? {} : { flag: node["x-adxkit-flag"] }),
      env: env as string[],
      secret,
      type: [node.type].flat(),
      ...(node.enum ? { choices: node.enum.map(String) } : {}),
      ...(node.default !== undefined ? { default: node.default } : {}),
      description: String(node.description ?? "").trim(),
    };
  });
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

function buildErrors(data: any, problems: string[]): ErrorsModel {
  const reportStatus = (data?.["report-status"] ?? []).map((s: any) => ({
    code: s.code,
    msg: s.msg,
    name: s.name,
    appliesTo: s["applies-to"] ?? [],
    description: s.description ?? "",
  }));
  if (reportStatus.length === 0) problems.push("errors.yaml: report-status is empty");
  // validation-rules holds both the keyword kinds (with `keywords`) and the named rules (with `severity`).
  const rules: any[] = data?.["validation-rules"] ?? [];
  const lenientOf = (r: any) => {
    const policy = lenientPolicy(r.lenient, `errors.yaml: validation-rules ${r.id} lenient`, problems);
    return policy !== undefined ? { lenient: policy } : {};
  };
  const namedRules: NamedRuleModel[] = rules
    .filter((r) => !Array.isArray(r.keywords))
    .map((r) => ({
      id: r.id,
      description: r.description ?? "",
      severity: r.severity === "warning" ? "warning" : "error",
      ...lenientOf(r),
      appliesTo: r["applies-to"] ?? [],
      ...(typeof r.message === "string" ? { message: r.message } : {}),
      ...(Number.isInteger(r["http-status"]) ? { httpStatus: r["http-status"] } : {}),
      ...(Number.isInteger(r["report-status"]) ? { reportStatus: r["report-status"] } : {}),
    }));
  const validationRules = rules
    .filter((r) => Array.isArray(r.keywords))
    .map((k) => ({ id: k.id, description: k.description ?? "", keywords: k.keywords, severity: k.severity === "warning" ? ("warning" as const) : ("error" as const), ...lenientOf(k) }));
  return {
    reportStatus,
    precedence: data?.["report-status-precedence"] ?? [],
    validationRules,
    namedRules,
    lenientPolicies: Object.fromEntries([...validationRules, ...namedRules].filter((r) => r.lenient !== undefined).map((r) => [r.id, r.lenient!])),
    auctionRejections: (data?.["auction-rejections"] ?? []).map((r: any) => ({ id: r.id, description: r.description ?? "", rules: r.rules ?? [] })),
  };
}

/** Calls `visit` on every schema node, depth first, with a JSON Pointer-ish location. */
export function walkSchema(node: any, visit: (node: Record<string, any>, at: string) => void, at = ""): void {
  if (!node || typeof node !== "object" || Array.isArray(node)) return;
  visit(node, at);
  for (const [key, child] of Object.entries(node)) {
    if (key === "x-examples" || key === "default" || key === "examples" || key === "const" || key === "enum") continue;
    if (Array.isArray(child)) child.forEach((item, i) => walkSchema(item, visit, `${at}/${key}/${i}`));
    else if (child && typeof child === "object") walkSchema(child, visit, `${at}/${key}`);
  }
}

/**
 * The recommended fields reachable from a root schema, following file $refs (a schema already on
 * the path is not entered again): only the branches that lead to a recommended field are kept.
 */
function recommendedTree(root: Record<string, any>, byFile: Map<string, { data: any }>, stack: string[] = []): RecommendedNode | undefined {
  const resolve = (node: any): { node: any; file?: string } => {
    let file: string | undefined;
    while (node && typeof node.$ref === "string" && byFile.has(node.$ref) && !node.properties && !node.items) {
      file = node.$ref;
      node = byFile.get(node.$ref)!.data;
    }
    return { node, file };
  };
  const { node, file } = resolve(root);
  if (!node || typeof node !== "object" || (file !== undefined && stack.includes(file))) return undefined;
  const inner = file !== undefined ? [...stack, file] : stack;
  const out: RecommendedNode = {};
  // A schema that is itself a $ref plus local properties (DemandReportRequest) gathers both.
  const sources = [node, ...(typeof node.$ref === "string" && byFile.has(node.$ref) ? [byFile.get(node.$ref)!.data] : [])];
  for (const source of sources) {
    for (const [name, child] of Object.entries<any>(source.properties ?? {})) {
      if (child?.["x-recommended"] === true && !out.fields?.some(([n]) => n === name)) {
        const unless: string[] | undefined = child["x-recommended-unless"];
        (out.fields ??= []).push(unless ? [name, unless] : [name]);
      }
      const sub = recommendedTree(child, byFile, inner);
      if (sub) (out.properties ??= {})[name] ??= sub;
    }
    if (source.items && typeof source.items === "object") out.items ??= recommendedTree(source.items, byFile, inner);
  }
  if (out.items === undefined) delete out.items;
  return out.fields || out.properties || out.items ? out : undefined;
}

function reachableSchemas(rootId: string, schemas: SchemaModel[]): SchemaModel[] {
  const byFile = new Map(schemas.map((s) => [`${s.id}.yaml`, s]));
  const seen = new Map<string, SchemaModel>();
  const visit = (s: SchemaModel) => {
    if (seen.has(s.id)) return;
    seen.set(s.id, s);
    walkSchema(s.schema, (node) => {
      if (typeof node.$ref === "string" && byFile.has(node.$ref)) visit(byFile.get(node.$ref)!);
    });
  };
  visit(schemas.find((s) => s.id === rootId)!);
  return [...seen.values()];
}

function collectChoices(schema: any): string[] {
  const out: string[] = [];
  walkSchema(schema, (node, at) => {
    if (typeof node["x-adxkit-choice"] === "string") out.push(`${at || "/"}: ${node["x-adxkit-choice"]}`);
  });
  return out;
}

const macrosOf = (document: Record<string, any>): MacroModel[] =>
  (document.components?.["x-macros"] ?? []).map((m: any) => ({ macro: m.macro, field: m.field, source: m.source }));

/** Finds spec/schemas objects by a `$ref` to their file (`imp.yaml`) or to their component (`#/components/schemas/Imp`). */
function schemaIndex(objects: { id: string; title: string }[]): SchemaIndex {
  const byRef = new Map<string, { id: string; title: string }>();
  for (const o of objects) {
    byRef.set(`${o.id}.yaml`, o);
    byRef.set(`#/components/schemas/${o.title}`, o);
  }
  return { resolve: (ref) => byRef.get(ref.replace(/^(\.\.\/schemas\/|\.\/)/, "")) };
}

/** Fills each schema's `fields`: its own, merged over those of its bases (base order first). */
function resolveFields(schemas: SchemaModel[], index: SchemaIndex): void {
  const byId = new Map(schemas.map((s) => [s.id, s]));
  const describe = (id: string) => byId.get(id)?.description ?? "";
  const done = new Map<string, FieldModel[]>();
  const fieldsOf = (id: string, seen: Set<string>): FieldModel[] => {
    if (done.has(id)) return done.get(id)!;
    if (seen.has(id)) return [];
    seen.add(id);
    const s = byId.get(id)!;
    const fields = mergeFields(ownFields(s.schema, s.id, index, describe), s.bases.flatMap((b) => fieldsOf(b, seen)));
    done.set(id, fields);
    return fields;
  };
  for (const s of schemas) s.fields = fieldsOf(s.id, new Set());
}
