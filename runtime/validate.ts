/**
 * Runs one kind of validation: the precompiled fast validator first (the common, valid case
 * costs one call), then, only when it fails, the diagnostic validator that lists every problem;
 * then the rules written in code and the recommended fields, whatever the schema found: every
 * problem of a payload comes in one round. Generated code wires each kind through `createValidator`.
 */
import { pointerSegment, valueAt, type ValidateOptions, type ValidationIssue, type ValidationResult } from "./issues.js";
import { fieldName, keywordMessage, type CodelistFacts, type KeywordError } from "./messages.js";
import { parseNativeDocument, rules, type EmbeddedKind, type RuleContext } from "./rules.js";

/** A precompiled ajv function: fast (first error) or diagnostic (all errors, verbose). */
export interface CompiledSchema {
  (data: unknown): boolean;
  errors?: KeywordError[] | null;
}

/**
 * The recommended-field check the generator writes for a kind: calls `missing` with the pointer
 * of each recommended field absent where its object is present (and the siblings that would
 * have excused it).
 */
export type RecommendedCheck = (payload: unknown, missing: (path: string, unless?: readonly string[]) => void) => void;

export interface ValidatorDefinition {
  /** The fast validator; called once, on the first validation (the generated code compiles lazily). */
  fast: () => CompiledSchema;
  /** The diagnostic validator; called on the first invalid payload. */
  diagnose: () => CompiledSchema;
  /** The rules written in code that apply to this kind (runtime/rules.ts). */
  codeRules: readonly string[];
  /**
   * Runs those rules; the generated code calls each from a call site of its own (one target per
   * site, which the engine can inline), where a loop over them would call through one site.
   */
  checkRules?: (payload: unknown, context: RuleContext) => void;
  /** A wrapper property accepted around the document and validated through (`{"native": {...}}`). */
  unwrap?: string;
  /** Rule kind of each ajv keyword (spec/errors.yaml validation-rules). */
  keywordRules: Readonly<Record<string, string>>;
  /** Rules reported as warnings in lenient mode (code-list values, known deviations). */
  lenientRules: ReadonlySet<string>;
  /** Rules whose issues are warnings in every mode (spec/errors.yaml severity: warning). */
  warningRules: ReadonlySet<string>;
  /** Messages declared by named rules for the keyword they name (`{field}`, `{value}`). */
  ruleMessages: Readonly<Record<string, string>>;
  /** The recommended fields of this kind's payload (spec: x-recommended). */
  recommended?: RecommendedCheck;
  /** Code lists by id, for messages; looked up lazily. */
  codelists: () => Readonly<Record<string, CodelistFacts>>;
  /** Validators of embedded documents (native payloads), looked up lazily to allow cycles. */
  embedded?: () => Partial<Record<EmbeddedKind, Validator>>;
}

export type Validator = (payload: unknown, request?: unknown, options?: ValidateOptions) => ValidationResult;

const VALID: ValidationResult = /* @__PURE__ */ Object.freeze({ valid: true, errors: /* @__PURE__ */ Object.freeze([]) as any, warnings: /* @__PURE__ */ Object.freeze([]) as any });

/** Keywords whose failure is the node's shape, never the rule an `x-rule` next to them names. */
const shapeKeywords = /* @__PURE__ */ new Set(["type", "required", "pattern", "format"]);
/** The lists of category codes that a cattax naming another taxonomy exempts. */
const CATEGORY_LIST = "iab-category";

/** What turning ajv's errors into issues needs. */
export interface IssueContext {
  keywordRules: Readonly<Record<string, string>>;
  ruleMessages?: Readonly<Record<string, string>>;
  codelists?: (id: string) => CodelistFacts | undefined;
  /** The payload the errors are about (category codes read the cattax beside them). */
  payload?: unknown;
}

/** Turns ajv's errors into issues with rule ids and messages; `required` points at the missing field, `additionalProperties` at the unknown one. */
export function issuesFromAjv(errors: readonly KeywordError[], context: IssueContext): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  const codelists = context.codelists ?? (() => undefined);
  for (const error of errors) {
    let path = error.instancePath;
    if (error.keyword === "required") path += "/" + pointerSegment(error.params.missingProperty);
    if (error.keyword === "additionalProperties") path += "/" + pointerSegment(error.params.additionalProperty);
    // x-rule names the rule of the node's own constraint (minItems, a code list, not), never of its shape.
    const named = !shapeKeywords.has(error.keyword) ? error.parentSchema?.["x-rule"] : undefined;
    let rule: string = named ?? (error.keyword === "x-codelist" ? "codelist" : (context.keywordRules[error.keyword] ?? "schema"));
    let message: string;
    if (error.keyword === "x-codelist" && error.params.deprecated) {
      rule = "deprecated";
      message = keywordMessage(error, path, codelists);
    } else if (error.keyword === "x-codelist" && error.params.list === CATEGORY_LIST && otherTaxonomy(context.payload, path) !== undefined) {
      // The object names another taxonomy in cattax: its codes are not ours to judge. One warning per field.
      rule = "category-taxonomy";
      path = path.slice(0, path.lastIndexOf("/"));
      message = `${fieldName(path)} holds codes of taxonomy ${otherTaxonomy(context.payload, path + "/0")} (cattax); not checked against the ${CATEGORY_LIST} list`;
    } else {
      message = keywordMessage(error, path, codelists, named !== undefined ? context.ruleMessages?.[named] : undefined);
    }
    const key = `${path}\0${rule}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, rule, message });
  }
  return out;
}

/** The cattax of the object holding the category code at `path`, when it names a taxonomy other than 1. */
function otherTaxonomy(payload: unknown, path: string): unknown {
  const holder = path.split("/").slice(0, -2).join("/");
  const cattax = (valueAt(payload, holder) as Record<string, unknown> | undefined)?.cattax;
  return cattax !== undefined && cattax !== 1 ? cattax : undefined;
}

/** Bounded caches of embedded documents by text, per kind: their strict-mode result, or null when not JSON. */
const embeddedCaches: Record<EmbeddedKind, Map<string, ValidationResult | null>> = { "native-request": /* @__PURE__ */ new Map(), "native-response": /* @__PURE__ */ new Map() };
const EMBEDDED_CACHE_ENTRIES = 1024;
const EMBEDDED_CACHE_MAX_TEXT = 16 * 1024;
/** Embedded documents are checked without their recommended fields: the outer payload's warnings stay about it. */
const EMBEDDED_OPTIONS: ValidateOptions = /* @__PURE__ */ Object.freeze({ recommended: false });

/** One call's mutable state, reused across calls: the valid path allocates nothing. */
class Run implements RuleContext {
  request: unknown = undefined;
  lenient = false;
  errors: ValidationIssue[] | null = null;
  warnings: ValidationIssue[] | null = null;
  constructor(private readonly definition: ValidatorDefinition) {}

  /** A recommended field is missing (the generated check calls this only then). */
  readonly missing = (path: string, unless?: readonly string[]): void => {
    if (this.has(path)) return;
    this.add({ path, rule: "recommended", message: `${fieldName(path)} is missing; recommended${unless !== undefined ? ` unless ${unless.join(" or ")} is given` : ""}` }, true);
  };

  add(issue: ValidationIssue, asWarning = this.definition.warningRules.has(issue.rule) || (this.lenient && this.definition.lenientRules.has(issue.rule))): void {
    if (asWarning) (this.warnings ??= []).push(issue);
    else (this.errors ??= []).push(issue);
  }

  /** A rule's issue; a value the schema already rejected is not reported again (one problem per value). */
  report(path: string, rule: string, message: string): void {
    if (this.errors?.some((issue) => issue.path === path)) return;
    this.add({ path, rule, message });
  }

  /**
   * Embedded issues keep their rule, under the path (and the name) of the field carrying the
   * document. Lenient mode makes every issue of a native request a warning (the payload is the
   * bidder's contract); those of native markup stay errors (markup that cannot be served).
   */
  merge(result: ValidationResult, basePath: string, kind: EmbeddedKind = "native-request"): void {
    const carrier = fieldName(basePath);
    const moved = (issue: ValidationIssue) => ({ path: basePath + issue.path, rule: issue.rule, message: `${carrier}: ${issue.message}` });
    for (const issue of result.errors) this.add(moved(issue), kind === "native-request" ? this.lenient : undefined);
    for (const issue of result.warnings) this.add(moved(issue), true);
  }

  validateEmbedded(kind: EmbeddedKind, document: unknown, basePath: string): void {
    const validator = this.definition.embedded?.()[kind];
    if (validator) this.merge(validator(document, undefined, EMBEDDED_OPTIONS), basePath, kind);
  }

  embedded(kind: EmbeddedKind, text: string): ValidationResult | null {
    const cache = embeddedCaches[kind];
    let result = cache.get(text);
    if (result === undefined) {
      const document = parseNativeDocument(text);
      const validator = this.definition.embedded?.()[kind];
      result = document === undefined ? null : validator ? validator(document, undefined, EMBEDDED_OPTIONS) : VALID;
      if (text.length <= EMBEDDED_CACHE_MAX_TEXT) {
        if (cache.size >= EMBEDDED_CACHE_ENTRIES) cache.clear();
        cache.set(text, result);
      }
    }
    return result;
  }

  /** True when an issue is already reported at `path` (a missing recommended field the rules reported). */
  has(path: string): boolean {
    return (this.errors?.some((i) => i.path === path) ?? false) || (this.warnings?.some((i) => i.path === path) ?? false);
  }
}

/** Builds a validator function for one kind. */
export function createValidator(definition: ValidatorDefinition): Validator {
  const codeRules = definition.codeRules.map((id) => rules[id]);
  const checkRules = definition.checkRules ?? ((payload: unknown, context: RuleContext) => {
    for (let i = 0; i < codeRules.length; i++) codeRules[i](payload, context);
  });
  const run = new Run(definition);
  let fast: CompiledSchema | undefined;
  const unwrap = definition.unwrap;
  const recommended = definition.recommended;
  let codelistsById: Readonly<Record<string, CodelistFacts>> | undefined;
  const codelist = (id: string) => (codelistsById ??= definition.codelists())[id];
  const validate: Validator = function validate(payload, request, options) {
    run.lenient = options?.lenient === true;
    run.request = request;
    run.errors = null;
    run.warnings = null;
    if (!(fast ??= definition.fast())(payload)) {
      const diagnose = definition.diagnose();
      diagnose(payload);
      const issues = issuesFromAjv(diagnose.errors ?? [], { keywordRules: definition.keywordRules, ruleMessages: definition.ruleMessages, codelists: codelist, payload });
      for (const issue of issues) run.add(issue);
    }
    checkRules(payload, run);
    if (recommended !== undefined && options?.recommended !== false) recommended(payload, run.missing);
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
