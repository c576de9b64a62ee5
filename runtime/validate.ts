/**
 * Runs one kind of validation: the precompiled fast validator first (the common, valid case
 * costs one call), then, only when it fails, the diagnostic validator that lists every problem;
 * then the rules written in code. Generated code wires each kind through `createValidator`.
 */
import { pointerSegment, type ValidateOptions, type ValidationIssue, type ValidationResult } from "./issues.js";
import { parseNativeDocument, rules, type RuleContext } from "./rules.js";

/** A precompiled ajv function: fast (first error) or diagnostic (all errors, verbose). */
export interface CompiledSchema {
  (data: unknown): boolean;
  errors?: AjvError[] | null;
}

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, any>;
  message?: string;
  parentSchema?: Record<string, any>;
}

export interface ValidatorDefinition {
  /** The fast validator; called once, on the first validation (the generated code compiles lazily). */
  fast: () => CompiledSchema;
  /** The diagnostic validator; called on the first invalid payload. */
  diagnose: () => CompiledSchema;
  codeRules: readonly string[];
  /** A wrapper property accepted around the document and validated through (`{"native": {...}}`). */
  unwrap?: string;
  /** Rule kind of each ajv keyword (spec/errors.yaml validation-rules). */
  keywordRules: Readonly<Record<string, string>>;
  /** Rules reported as warnings in lenient mode (code-list values, known deviations). */
  lenientRules: ReadonlySet<string>;
  /** Validators of embedded documents (native payloads), looked up lazily to allow cycles. */
  embedded?: () => Partial<Record<"native-request" | "native-response", Validator>>;
}

export type Validator = (payload: unknown, request?: unknown, options?: ValidateOptions) => ValidationResult;

const VALID: ValidationResult = /* @__PURE__ */ Object.freeze({ valid: true, errors: /* @__PURE__ */ Object.freeze([]) as any, warnings: /* @__PURE__ */ Object.freeze([]) as any });

/** A readable name for the value at a JSON Pointer: `bidfloor`, `bcat[0]`, `payload`. */
function fieldName(path: string): string {
  const segments = path.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  let name = "";
  for (let i = segments.length - 1; i >= 0; i--) {
    name = /^\d+$/.test(segments[i]) ? `[${segments[i]}]${name}` : `${segments[i]}${name}`;
    if (!/^\d+$/.test(segments[i])) break;
  }
  return name === "" ? "payload" : name;
}

const shapeKeywords = /* @__PURE__ */ new Set(["type", "required", "pattern", "format"]);

/** Turns ajv's errors into issues with rule ids; `required` points at the missing field, `additionalProperties` at the unknown one. */
export function issuesFromAjv(errors: readonly AjvError[], keywordRules: Readonly<Record<string, string>>): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    let path = error.instancePath;
    if (error.keyword === "required") path += "/" + pointerSegment(error.params.missingProperty);
    if (error.keyword === "additionalProperties") path += "/" + pointerSegment(error.params.additionalProperty);
    // x-rule names the rule of the node's own constraint (minItems, a code list, not), never of its shape.
    const named = !shapeKeywords.has(error.keyword) ? error.parentSchema?.["x-rule"] : undefined;
    const rule = named ?? (error.keyword === "x-codelist" ? "codelist" : (keywordRules[error.keyword] ?? "schema"));
    const message =
      error.keyword === "required"
        ? `${fieldName(path)} is required`
        : error.keyword === "additionalProperties"
          ? `${fieldName(path)} is not a field of this object`
          : `${fieldName(path)} ${error.message ?? "is invalid"}`;
    const key = `${path}\0${rule}\0${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, rule, message });
  }
  return out;
}

type EmbeddedKind = "native-request" | "native-response";

/** Bounded caches of embedded documents by text, per kind: their strict-mode result, or null when not JSON. */
const embeddedCaches: Record<EmbeddedKind, Map<string, ValidationResult | null>> = { "native-request": /* @__PURE__ */ new Map(), "native-response": /* @__PURE__ */ new Map() };
const EMBEDDED_CACHE_ENTRIES = 1024;
const EMBEDDED_CACHE_MAX_TEXT = 16 * 1024;

/** One call's mutable state, reused across calls: the valid path allocates nothing. */
class Run implements RuleContext {
  request: unknown = undefined;
  lenient = false;
  errors: ValidationIssue[] | null = null;
  warnings: ValidationIssue[] | null = null;
  constructor(private readonly definition: ValidatorDefinition) {}

  add(issue: ValidationIssue, asWarning = this.lenient && this.definition.lenientRules.has(issue.rule)): void {
    if (asWarning) (this.warnings ??= []).push(issue);
    else (this.errors ??= []).push(issue);
  }

  report(path: string, rule: string, message: string): void {
    this.add({ path, rule, message });
  }

  /** Embedded issues keep their rule; lenient mode makes every one a warning (the payload is the bidder's contract). */
  private merge(result: ValidationResult, basePath: string): void {
    for (const issue of result.errors) this.add({ ...issue, path: basePath + issue.path }, this.lenient);
    for (const issue of result.warnings) this.add({ ...issue, path: basePath + issue.path }, true);
  }

  validateEmbedded(kind: EmbeddedKind, document: unknown, basePath: string): void {
    const validator = this.definition.embedded?.()[kind];
    if (validator) this.merge(validator(document), basePath);
  }

  validateEmbeddedText(kind: EmbeddedKind, text: string, basePath: (index: number) => string, index: number): boolean {
    const cache = embeddedCaches[kind];
    let result = cache.get(text);
    if (result === undefined) {
      const document = parseNativeDocument(text);
      const validator = this.definition.embedded?.()[kind];
      result = document === undefined ? null : validator ? validator(document) : VALID;
      if (text.length <= EMBEDDED_CACHE_MAX_TEXT) {
        if (cache.size >= EMBEDDED_CACHE_ENTRIES) cache.clear();
        cache.set(text, result);
      }
    }
    if (result === null) return false;
    if (result !== VALID) this.merge(result, basePath(index));
    return true;
  }
}

/** Builds a validator function for one kind. */
export function createValidator(definition: ValidatorDefinition): Validator {
  const codeRules = definition.codeRules.map((id) => rules[id]);
  const run = new Run(definition);
  let fast: CompiledSchema | undefined;
  const unwrap = definition.unwrap;
  const validate: Validator = function validate(payload, request, options) {
    run.lenient = options?.lenient === true;
    run.request = request;
    run.errors = null;
    run.warnings = null;
    if (!(fast ??= definition.fast())(payload)) {
      const diagnose = definition.diagnose();
      diagnose(payload);
      for (const issue of issuesFromAjv(diagnose.errors ?? [], definition.keywordRules)) run.add(issue);
      // Rules in code trust the structure; with structural errors they would only add noise.
      if (run.errors !== null) return { valid: false, errors: run.errors, warnings: run.warnings ?? [] };
    }
    for (let i = 0; i < codeRules.length; i++) codeRules[i](payload, run);
    const errors = run.errors;
    const warnings = run.warnings;
    run.request = undefined;
    if (errors === null && warnings === null) return VALID;
    return { valid: errors === null, errors: errors ?? [], warnings: warnings ?? [] };
  };
  if (unwrap === undefined) return validate;
  return (payload, request, options) => {
    const inner = (payload as Record<string, unknown> | null)?.[unwrap];
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return validate(payload, request, options);
    const result = validate(inner, request, options);
    if (result.valid && result.warnings.length === 0) return result;
    const prefix = (issue: ValidationIssue) => ({ ...issue, path: `/${unwrap}${issue.path}` });
    return { valid: result.valid, errors: result.errors.map(prefix), warnings: result.warnings.map(prefix) };
  };
}
