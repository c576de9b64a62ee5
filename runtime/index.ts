/**
 * `@adxkit/bindings/runtime`: what the generated validators and code lists import. No
 * dependencies and no Node-only modules, so the bindings bundle for browsers and edge runtimes.
 * The Fastify side of the server stubs is apart, in `@adxkit/bindings/runtime/fastify`.
 */
export { createValidator, issuesFromAjv, type CompiledSchema, type Validator, type ValidatorDefinition } from "./validate.js";
export { pointer, pointerSegment, type ValidateOptions, type ValidationIssue, type ValidationResult } from "./issues.js";
export { implementedRules, parseNativeDocument, rules, type Rule, type RuleContext } from "./rules.js";
export { defineCodelist, defineIab, type CodelistApi, type CodelistEntry, type CodelistMeta, type IabApi } from "./codelist.js";
export { formats, isIPv4, isIPv6, isReportTime, ucs2length } from "./formats.js";
