/**
 * `@adxkit/bindings/runtime`: what the generated validators, code lists and report codec import. No
 * dependencies and no Node-only modules, so the bindings bundle for browsers and edge runtimes.
 * The Fastify side of the server stubs is apart, in `@adxkit/bindings/runtime/fastify`.
 */
export { createValidator, embeddedDocument, issuesFromAjv, type CompiledSchema, type FieldFacts, type IssueContext, type RecommendedCheck, type Validator, type ValidatorDefinition } from "./validate.js";
export { pointer, pointerSegment, pointerSegments, valueAt, type Normalisation, type ValidateOptions, type ValidationIssue, type ValidationResult } from "./issues.js";
export { applyNormalisations, dropPath, lenientVocabulary, normalisedValue, policyOf, type LenientPart, type LenientPolicy, type LenientTreatment, type Normaliser } from "./lenient.js";
export { describeValue, fieldName, keywordMessage, type CodelistFacts, type KeywordError } from "./messages.js";
export { implementedRules, parseNativeDocument, rules, type EmbeddedKind, type Rule, type RuleContext } from "./rules.js";
export { defineCodelist, defineIab, type CodelistApi, type CodelistEntry, type CodelistMeta, type IabApi } from "./codelist.js";
export { formatExpectations, formats, isCurrency, isIPv4, isIPv6, isLanguage, isLinkUrl, isReportTime, isWebUrl, ucs2length } from "./formats.js";
export { ByteReader, ByteWriter } from "./bytes.js";
export { hourMillis } from "./hour.js";
export { codeCheck, countCheck, type FieldCheck, hourCheck, isCode, isCount, isMoney, moneyCheck, stringCheck, textCheck, validHour, withinLength } from "./fact-checks.js";
