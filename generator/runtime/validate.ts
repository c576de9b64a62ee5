/**
 * Runs one kind of validation: the precompiled fast validator first (the common, valid case
 * costs one call), then, only when it fails, the diagnostic validator that lists every problem;
 * then the rules written in code. Generated code wires each kind through `createValidator`.
 */
import { pointer, pointerSegment, type ValidateOptions, type ValidationIssue, type ValidationResult } from "./issues.js";
import { rules, type RuleContext } from "./rules.js";

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
  fast: CompiledSchema;
  diagnose: CompiledSchema;
  codeRules: readonly string[];
  /** Rule kind of each ajv keyword (spec/errors.yaml validation-rules). */
  keywordRules: Readonly<Record<string, string>>;
  /** Rules reported as warnings in lenient mode (code-list values, known deviations). */
  lenientRules: ReadonlySet<string>;
  /** Validators of embedded documents (native payloads), looked up lazily to allow cycles. */
  embedded?: () => Partial<Record<"native-request" | "native-response", Validator>>;
}

export type Validator = (payload: unknown, request?: unknown, options?: ValidateOptions) => ValidationResult;

const VALID: ValidationResult = Object.freeze({ valid: true, errors: Object.freeze([]) as any, warnings: Object.freeze([]) as any });

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

/** Turns ajv's errors into issues with rule ids; `required` points at the missing field itself. */
export function issuesFromAjv(errors: readonly AjvError[], keywordRules: Readonly<Record<string, string>>): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    let path = error.instancePath;
    if (error.keyword === "required") path += "/" + pointerSegment(error.params.missingProperty);
    const named = error.keyword !== "type" && error.keyword !== "required" ? error.parentSchema?.["x-rule"] : undefined;
    const rule = named ?? (error.keyword === "x-codelist" ? "codelist" : (keywordRules[error.keyword] ?? "schema"));
    const message =
      error.keyword === "required" ? `${fieldName(path)} is required` : `${fieldName(path)} ${error.message ?? "is invalid"}`;
    const key = `${path}\0${rule}\0${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, rule, message });
  }
  return out;
}

/** Builds a validator function for one kind. */
export function createValidator(definition: ValidatorDefinition): Validator {
  const codeRules = definition.codeRules.map((id) => rules[id]);
  return function validate(payload, request, options) {
    const lenient = options?.lenient === true;
    const errors: ValidationIssue[] = [];
    const warnings: ValidationIssue[] = [];
    const add = (issue: ValidationIssue) => {
      if (lenient && definition.lenientRules.has(issue.rule)) warnings.push(issue);
      else errors.push(issue);
    };
    if (!definition.fast(payload)) {
      definition.diagnose(payload);
      for (const issue of issuesFromAjv(definition.diagnose.errors ?? [], definition.keywordRules)) add(issue);
      // Rules in code trust the structure; with structural errors they would only add noise.
      if (errors.length > 0) return { valid: false, errors, warnings };
    }
    if (codeRules.length > 0) {
      const context: RuleContext = {
        request,
        report: (path, rule, message) => add({ path, rule, message }),
        validateEmbedded(kind, document, basePath) {
          const validator = definition.embedded?.()[kind];
          if (!validator) return;
          const result = validator(document, undefined, options);
          // The embedded native document is the bidder's contract (its version may predate 1.2):
          // lenient mode reports its problems as warnings and forwards it untouched.
          for (const issue of result.errors) (lenient ? warnings : errors).push({ ...issue, path: basePath + issue.path });
          for (const issue of result.warnings) warnings.push({ ...issue, path: basePath + issue.path });
        },
      };
      for (const rule of codeRules) rule(payload, context);
    }
    if (errors.length === 0 && warnings.length === 0) return VALID;
    return { valid: errors.length === 0, errors, warnings };
  };
}

export { pointer };
