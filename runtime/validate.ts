/**
 * Runs one kind of validation: the precompiled fast validator first (the common, valid case
 * costs one call), then, only when it fails, the diagnostic validator that lists every problem;
 * then the rules written in code and the recommended fields, whatever the schema found: every
 * problem of a payload comes in one round. Generated code wires each kind through `createValidator`.
 */
import { pointerSegment, valueAt, type Normalisation, type ValidateOptions, type ValidationIssue, type ValidationResult } from "./issues.js";
import { applyNormalisations, dropPath, isInside, normalisedValue, policyOf, REMOVED, treatmentNote, type LenientPolicy, type NormaliseContext } from "./lenient.js";
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
  /** Each rule's treatment in lenient mode (spec/errors.yaml `lenient`); a rule without one keeps its severity. */
  lenientPolicies: Readonly<Record<string, LenientPolicy>>;
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

/** What lenient mode needs about an issue found by the schema: the field's own policy (`x-lenient`) and what a normaliser may consult. */
export interface FieldFacts extends NormaliseContext {
  policy?: LenientPolicy;
}

/**
 * Turns ajv's errors into issues with rule ids and messages; `required` points at the missing
 * field, `additionalProperties` at the unknown one. `facts` receives each issue's field facts.
 */
export function issuesFromAjv(errors: readonly KeywordError[], context: IssueContext, facts?: (issue: ValidationIssue, facts: FieldFacts) => void): ValidationIssue[] {
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
    const issue = { path, rule, message };
    out.push(issue);
    if (facts !== undefined) {
      // A missing field's policy is declared on the field, not on the object that requires it.
      const raw = error.keyword === "required" ? error.parentSchema?.properties?.[error.params.missingProperty]?.["x-lenient"] : error.parentSchema?.["x-lenient"];
      const list = error.keyword === "x-codelist" ? codelists(error.params.list) : undefined;
      facts(issue, { policy: policyOf(raw), list, format: error.keyword === "format" ? error.params.format : undefined });
    }
  }
  return out;
}

/** The cattax of the object holding the category code at `path`, when it names a taxonomy other than 1. */
function otherTaxonomy(payload: unknown, path: string): unknown {
  const holder = path.split("/").slice(0, -2).join("/");
  const cattax = (valueAt(payload, holder) as Record<string, unknown> | undefined)?.cattax;
  return cattax !== undefined && cattax !== 1 ? cattax : undefined;
}

/** Bounded caches of embedded documents by text, per kind and mode: their result, or null when not JSON. */
const embeddedCaches = {
  strict: { "native-request": /* @__PURE__ */ new Map(), "native-response": /* @__PURE__ */ new Map() } as Record<EmbeddedKind, Map<string, ValidationResult | null>>,
  lenient: { "native-request": /* @__PURE__ */ new Map(), "native-response": /* @__PURE__ */ new Map() } as Record<EmbeddedKind, Map<string, ValidationResult | null>>,
};
const EMBEDDED_CACHE_ENTRIES = 1024;
const EMBEDDED_CACHE_MAX_TEXT = 16 * 1024;
/** Embedded documents are checked without their recommended fields: the outer payload's warnings stay about it. */
const EMBEDDED_OPTIONS: ValidateOptions = /* @__PURE__ */ Object.freeze({ recommended: false });
const EMBEDDED_LENIENT: ValidateOptions = /* @__PURE__ */ Object.freeze({ recommended: false, lenient: true });

/**
 * An embedded document carried as text (a native request, native markup), validated by
 * `validator` without its recommended fields: the result, or null when the text is not a JSON
 * object (Native 1.0's `{"native": …}` wrapper is unwrapped). Cached by text per kind and mode
 * and shared by every caller, so that the rules and a service checking the same text again (the
 * exchange's markup check) parse and validate it once; real traffic repeats native payloads.
 */
export function embeddedDocument(kind: EmbeddedKind, text: string, validator: Validator | undefined, lenient: boolean): ValidationResult | null {
  const cache = (lenient ? embeddedCaches.lenient : embeddedCaches.strict)[kind];
  let result = cache.get(text);
  if (result === undefined) {
    const document = parseNativeDocument(text);
    result = document === undefined ? null : validator ? validator(document, undefined, lenient ? EMBEDDED_LENIENT : EMBEDDED_OPTIONS) : VALID;
    if (text.length <= EMBEDDED_CACHE_MAX_TEXT) {
      if (cache.size >= EMBEDDED_CACHE_ENTRIES) cache.clear();
      cache.set(text, result);
    }
  }
  return result;
}

/** An issue lenient mode drops or normalises once every issue is known. */
interface Pending {
  issue: ValidationIssue;
  policy: LenientPolicy;
  facts?: NormaliseContext;
}

/** One call's mutable state, reused across calls: the valid path allocates nothing. */
class Run implements RuleContext {
  request: unknown = undefined;
  lenient = false;
  errors: ValidationIssue[] | null = null;
  warnings: ValidationIssue[] | null = null;
  pending: Pending[] | null = null;
  changes: Normalisation[] | null = null;
  constructor(private readonly definition: ValidatorDefinition) {}

  /** A recommended field is missing (the generated check calls this only then). */
  readonly missing = (path: string, unless?: readonly string[]): void => {
    // Nothing of a part lenient mode dropped is used: its missing fields are not worth a warning.
    if (this.has(path) || this.changes?.some((c) => c.action === "drop" && isInside(path, c.path))) return;
    this.add({ path, rule: "recommended", message: `${fieldName(path)} is missing; recommended${unless !== undefined ? ` unless ${unless.join(" or ")} is given` : ""}` }, true);
  };

  /**
   * Files an issue: a warning or an error by its rule's severity, or, in lenient mode, by the
   * treatment the field (`policy`, x-lenient) or else the rule declares; drops and normalisations
   * wait until every issue is known.
   */
  add(issue: ValidationIssue, asWarning?: boolean, policy?: LenientPolicy, facts?: NormaliseContext): void {
    const warning = asWarning ?? this.definition.warningRules.has(issue.rule);
    if (this.lenient && asWarning === undefined) {
      const lenient = policy ?? this.definition.lenientPolicies[issue.rule];
      if (lenient !== undefined) {
        if (lenient.treatment === "drop" || lenient.treatment === "normalise") {
          (this.pending ??= []).push({ issue, policy: lenient, facts });
          return;
        }
        if (lenient.treatment === "warn") return this.file(issue, true);
        if (lenient.treatment === "error") return this.file(issue, false);
      }
    }
    this.file(issue, warning);
  }

  private file(issue: ValidationIssue, warning: boolean): void {
    if (warning) (this.warnings ??= []).push(issue);
    else (this.errors ??= []).push(issue);
  }

  /** A rule's issue; a value the schema already rejected is not reported again (one problem per value). */
  report(path: string, rule: string, message: string): void {
    if (this.errors?.some((issue) => issue.path === path) || this.pending?.some((p) => p.issue.path === path)) return;
    this.add({ path, rule, message });
  }

  /**
   * Embedded issues keep their rule, under the path (and the name) of the field carrying the
   * document. In lenient mode the errors of a native request that is JSON are warnings (its
   * content is the bidders' contract: Prebid Server forwards it, bidders judge it); those of
   * native markup stay errors (markup that cannot be served). The changes lenient mode made
   * inside a document given as text replace its text.
   */
  merge(result: ValidationResult, basePath: string, kind: EmbeddedKind = "native-request", asText = true): void {
    const carrier = fieldName(basePath);
    const moved = (issue: ValidationIssue) => ({ path: basePath + issue.path, rule: issue.rule, message: `${carrier}: ${issue.message}` });
    for (const issue of result.errors) this.add(moved(issue), kind === "native-request" && this.lenient);
    for (const issue of result.warnings) this.add(moved(issue), true);
    if (asText && result.normalisations !== undefined && result.normalisations.length > 0) {
      (this.changes ??= []).push({ path: basePath, rule: result.normalisations[0].rule, action: "normalise", value: JSON.stringify(result.payload) });
    }
  }

  validateEmbedded(kind: EmbeddedKind, document: unknown, basePath: string): void {
    const validator = this.definition.embedded?.()[kind];
    if (validator) this.merge(validator(document, undefined, this.lenient ? EMBEDDED_LENIENT : EMBEDDED_OPTIONS), basePath, kind, false);
  }

  embedded(kind: EmbeddedKind, text: string): ValidationResult | null {
    return embeddedDocument(kind, text, this.definition.embedded?.()[kind], this.lenient);
  }

  /** True when an issue is already reported at `path` (a missing recommended field the rules reported). */
  has(path: string): boolean {
    return (this.errors?.some((i) => i.path === path) ?? false) || (this.warnings?.some((i) => i.path === path) ?? false) || (this.pending?.some((p) => p.issue.path === path) ?? false);
  }

  /**
   * Lenient mode, once every issue is known: each drop or normalisation is made when it can be
   * (a warning saying what was done), else it gets the policy's `otherwise`. Errors inside a
   * dropped part become warnings: nothing of that part is used.
   */
  settle(payload: unknown): void {
    for (const { issue, policy, facts } of this.pending!) {
      let change: Normalisation | undefined;
      if (policy.treatment === "drop") {
        const path = dropPath(policy.part ?? "value", issue.path, payload);
        if (path !== undefined) change = { path, rule: issue.rule, action: "drop" };
      } else {
        const value = normalisedValue(policy, valueAt(payload, issue.path), { ...facts, request: this.request });
        if (value !== undefined) change = { path: issue.path, rule: issue.rule, action: "normalise", ...(value === REMOVED ? {} : { value }) };
      }
      if (change === undefined && policy.otherwise === "drop") {
        const path = dropPath("value", issue.path, payload);
        if (path !== undefined) change = { path, rule: issue.rule, action: "drop" };
      }
      if (change === undefined) {
        this.file(issue, policy.otherwise === "warn");
        continue;
      }
      (this.changes ??= []).push(change);
      this.file({ ...issue, message: issue.message + treatmentNote(change) }, true);
    }
    const drops = this.changes?.filter((c) => c.action === "drop");
    if (drops?.length && this.errors !== null) {
      const inside = (issue: ValidationIssue) => drops.some((d) => isInside(issue.path, d.path));
      for (const issue of this.errors.filter(inside)) this.file(issue, true);
      this.errors = this.errors.filter((issue) => !inside(issue));
      if (this.errors.length === 0) this.errors = null;
    }
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
    run.pending = null;
    run.changes = null;
    if (!(fast ??= definition.fast())(payload)) {
      const diagnose = definition.diagnose();
      diagnose(payload);
      const context = { keywordRules: definition.keywordRules, ruleMessages: definition.ruleMessages, codelists: codelist, payload };
      issuesFromAjv(diagnose.errors ?? [], context, (issue, facts) => run.add(issue, undefined, facts.policy, facts));
    }
    checkRules(payload, run);
    if (run.pending !== null) run.settle(payload);
    if (recommended !== undefined && options?.recommended !== false) recommended(payload, run.missing);
    const { errors, warnings, changes } = run;
    run.request = undefined;
    if (errors === null && warnings === null) return VALID;
    const result: ValidationResult = { valid: errors === null, errors: errors ?? [], warnings: warnings ?? [] };
    if (changes !== null) {
      result.normalisations = changes;
      result.payload = applyNormalisations(payload, changes);
    }
    return result;
  };
  if (unwrap === undefined) return validate;
  return (payload, request, options) => {
    const inner = (payload as Record<string, unknown> | null)?.[unwrap];
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return validate(payload, request, options);
    const result = validate(inner, request, options);
    if (result.valid && result.warnings.length === 0) return result;
    const prefix = <T extends { path: string }>(issue: T): T => ({ ...issue, path: `/${unwrap}${issue.path}` });
    const out: ValidationResult = { valid: result.valid, errors: result.errors.map(prefix), warnings: result.warnings.map(prefix) };
    if (result.normalisations !== undefined) {
      out.normalisations = result.normalisations.map(prefix);
      out.payload = { ...(payload as Record<string, unknown>), [unwrap]: result.payload };
    }
    return out;
  };
}
