// Conformance on real traffic: the public OpenRTB samples of ../shared/corpus/openrtb (see its
// README.md). adxkit is an OpenRTB 2.5 + Native 1.2 validator for an in-app exchange; every file of
// the corpus gets a decision in corpus-decisions.json, next to this file:
//
// - requests/: every one accepted in lenient mode (an imp offering only audio is valid OpenRTB 2.5,
//   with the warning imp-media-supported: this exchange buys no audio, lenient mode drops the imp);
//   REQUEST_EXCEPTIONS are those strict mode rejects for a reason lenient mode repairs.
// - responses/: every one accepted in lenient mode; in strict mode each response whose same-named
//   request exists in requests/ passes validateBidResponse(response, request) with every
//   cross-check, except RESPONSE_EXCEPTIONS (UNPAIRED_EXCEPTIONS for answers without a request).
// - invalid-requests/ and invalid-responses/: one decision per file, grouped by the category of
//   REASONS.json, asserted in strict mode. A file without a decision fails the suite.
import { describe, it, expect } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { validateBidRequest, validateBidResponse, type Normalisation, type ValidationResult } from "@adxkit/bindings";

const CORPUS = new URL("../../shared/corpus/openrtb/", import.meta.url);
const present = existsSync(CORPUS);
if (!present) {
  console.warn(
    `[corpus] skipped: ${fileURLToPath(CORPUS)} is absent (../shared is not present next to this checkout); ` +
      "the conformance suite on public OpenRTB samples needs it, the rest of the tests do not.",
  );
}
const describeCorpus = present ? describe : describe.skip;

// ---------------------------------------------------------------- decisions

/** What adxkit does with one corpus file. */
type Decision =
  | {
      /** Rejected in strict mode with this rule (at this JSON Pointer, when given). */
      rejected: string;
      at?: string;
      why: string;
      /** Further errors the payload also breaks, each asserted like the first (strict mode). */
      also?: { rule: string; at: string }[];
      /**
       * The native payload's assets carry no id (Native 1.2 requires it), which hides the rule
       * REASONS.json names: rules written in code run only on a structurally valid payload. With
       * the asset ids numbered, this rule is reported.
       */
      withAssetIds?: string;
      /** Lenient mode: accepted with this warning, or still rejected (with a TODO for the lead). */
      lenient?: { warning: string } | { rejected: string; todo: string };
      /** Bid responses: the request the answer is cross-checked against (a key of ADAPTER_REQUESTS). */
      request?: string;
    }
  | {
      accepted: string;
      /**
       * Rules of the interface document the payload also breaks, unrelated to its documented
       * reason: strict mode rejects it for these alone, lenient mode accepts it with them as warnings.
       */
      besides?: string[];
    };

/** Resolves each `{ "$ref": "#/reasons/…" }` of the decisions file to the reason it names. */
function resolveReasons<T>(value: T, reasons: Record<string, unknown>): T {
  if (Array.isArray(value)) return value.map((item) => resolveReasons(item, reasons)) as T;
  if (typeof value !== "object" || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === "string") {
    const name = ref.replace(/^#\/reasons\//, "");
    if (!(name in reasons)) throw new Error(`corpus-decisions.json: ${ref} names no reason`);
    return reasons[name] as T;
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveReasons(item, reasons)])) as T;
}

type Rejection = Extract<Decision, { rejected: string }>;
interface DecisionsFile {
  reasons: Record<string, unknown>;
  "invalid-requests": Record<string, Record<string, Decision>>;
  "invalid-responses": Record<string, Record<string, Decision>>;
  /**
   * The requests the pbs-adsup answers were made for: the adapter fixture named by REASONS.json
   * src_path (prebid/prebid-server adapters/<name>/<name>test/supplemental/*.json, mockBidRequest),
   * reduced to what the cross-checks read (id, imp ids with their media object, cur).
   */
  "adapter-requests": Record<string, unknown>;
  /** Requests of requests/ that strict mode rejects, with the decision and what lenient mode changes to accept them. */
  "request-exceptions": Record<string, { rejected: string; at: string; why: string; lenient: Normalisation[] }>;
  /** Responses of responses/ that do NOT pass against their request, with the decision. */
  "response-exceptions": Record<string, Rejection>;
  /** Responses of responses/ without a request of their name that do NOT pass, with the decision. */
  "unpaired-exceptions": Record<string, Rejection>;
}
const decisions: DecisionsFile = (() => {
  const raw = JSON.parse(readFileSync(new URL("./corpus-decisions.json", import.meta.url), "utf8")) as DecisionsFile;
  return resolveReasons(raw, raw.reasons);
})();
const INVALID_REQUESTS = decisions["invalid-requests"];
const INVALID_RESPONSES = decisions["invalid-responses"];
const ADAPTER_REQUESTS = decisions["adapter-requests"];
const REQUEST_EXCEPTIONS = decisions["request-exceptions"];
const RESPONSE_EXCEPTIONS = decisions["response-exceptions"];
const UNPAIRED_EXCEPTIONS = decisions["unpaired-exceptions"];

// ---------------------------------------------------------------- helpers

const folder = (name: string) => new URL(`${name}/`, CORPUS);
const filesOf = (name: string) =>
  readdirSync(folder(name))
    .filter((file) => file.endsWith(".json") && file !== "REASONS.json")
    .sort();
const reasonsOf = (name: string): Record<string, { category: string; invalid_reason: string }> =>
  JSON.parse(readFileSync(new URL("REASONS.json", folder(name)), "utf8"));

const NOT_JSON = Symbol("not JSON");
/** Parses a corpus file; a body that is not JSON is what the HTTP layer reports as rule `json`. */
function load(name: string, file: string): unknown {
  try {
    return JSON.parse(readFileSync(new URL(file, folder(name)), "utf8"));
  } catch {
    return NOT_JSON;
  }
}
const notJson: ValidationResult = { valid: false, errors: [{ path: "", rule: "json", message: "body is not valid JSON" }], warnings: [] };

const offersOnlyAudio = (request: any) =>
  Array.isArray(request?.imp) && request.imp.some((imp: any) => imp?.audio !== undefined && imp.banner === undefined && imp.native === undefined && imp.video === undefined);

const describeIssues = (result: ValidationResult) => result.errors.map((e) => `${e.rule}@${e.path}`).join(", ");

function expectRejected(result: ValidationResult, rule: string, at?: string) {
  expect(result.valid, `expected rejection by ${rule}`).toBe(false);
  const hit = result.errors.some((issue) => issue.rule === rule && (at === undefined || issue.path === at));
  expect(hit, `expected ${rule}${at === undefined ? "" : ` at ${at}`}; got ${describeIssues(result)}`).toBe(true);
}

function expectAccepted(result: ValidationResult) {
  expect(result.errors, describeIssues(result)).toEqual([]);
  expect(result.valid).toBe(true);
}

/** Numbers the assets of the first imp's native payload that carry no id (1, 2, …). */
function withAssetIds(request: any): any {
  const copy = structuredClone(request);
  const native = copy.imp[0].native;
  const payload = JSON.parse(native.request);
  const document = payload.native ?? payload;
  document.assets.forEach((asset: any, index: number) => (asset.id ??= index + 1));
  native.request = JSON.stringify(payload);
  return copy;
}

const flatten = (table: Record<string, Record<string, Decision>>) =>
  Object.entries(table).flatMap(([category, decisions]) => Object.entries(decisions).map(([file, decision]) => ({ category, file, decision })));

const label = (decision: Decision) => ("rejected" in decision ? `rejected (${decision.rejected})` : "accepted");

// ---------------------------------------------------------------- suites

describeCorpus("corpus requests/: real requests", () => {
  const files = present ? filesOf("requests") : [];

  it("holds the files the README announces, and every exception names one of them", () => {
    expect(files.length).toBeGreaterThan(100);
    for (const file of Object.keys(REQUEST_EXCEPTIONS)) expect(files).toContain(file);
  });

  it.each(files)("%s", (file) => {
    const request = load("requests", file);
    const exception = REQUEST_EXCEPTIONS[file];
    // Lenient mode accepts every real request: what it cannot use it drops or normalises, with a warning.
    const lenient = validateBidRequest(request, { lenient: true });
    expectAccepted(lenient);
    if (offersOnlyAudio(request)) expect(lenient.warnings.some((issue) => issue.rule === "imp-media-supported")).toBe(true);
    if (exception) {
      expectRejected(validateBidRequest(request), exception.rejected, exception.at);
      expect(lenient.normalisations).toEqual(expect.arrayContaining(exception.lenient));
    }
  });
});

describeCorpus("corpus responses/: real answers", () => {
  const files = present ? filesOf("responses") : [];
  const requests = new Set(present ? filesOf("requests") : []);
  const paired = files.filter((file) => requests.has(file));
  const unpaired = files.filter((file) => !requests.has(file));

  it("pairs answers with their requests by file name, and every exception names a pair (or an answer without one)", () => {
    expect(paired.length).toBeGreaterThan(20);
    for (const file of Object.keys(RESPONSE_EXCEPTIONS)) expect(paired).toContain(file);
    for (const file of Object.keys(UNPAIRED_EXCEPTIONS)) expect(unpaired).toContain(file);
  });

  it.each(paired)("%s answers requests/%s (strict and lenient, with cross-checks)", (file) => {
    const response = load("responses", file);
    const request = load("requests", file);
    const result = validateBidResponse(response, request);
    const exception = RESPONSE_EXCEPTIONS[file];
    if (exception) expectRejected(result, exception.rejected, exception.at);
    else expectAccepted(result);
    expectAccepted(validateBidResponse(response, request, { lenient: true }));
  });

  it.each(unpaired)("%s (no request of that name: schema and rules only, strict and lenient)", (file) => {
    const response = load("responses", file);
    const result = validateBidResponse(response);
    const exception = UNPAIRED_EXCEPTIONS[file];
    if (exception) expectRejected(result, exception.rejected, exception.at);
    else expectAccepted(result);
    expectAccepted(validateBidResponse(response, undefined, { lenient: true }));
  });
});

function describeDecisions(name: "invalid-requests" | "invalid-responses", table: Record<string, Record<string, Decision>>) {
  describeCorpus(`corpus ${name}/: one decision per file`, () => {
    const files = present ? filesOf(name) : [];
    const reasons = present ? reasonsOf(name) : {};
    const rows = flatten(table);

    it("the decision table is complete: every file has exactly one decision, filed under its REASONS.json category", () => {
      const decided = new Map(rows.map((row) => [row.file, row.category]));
      expect(rows.length).toBe(decided.size);
      expect(files.filter((file) => !decided.has(file)), "files without a decision").toEqual([]);
      expect([...decided.keys()].filter((file) => !files.includes(file)), "decisions without a file").toEqual([]);
      const misfiled = rows.filter((row) => reasons[row.file]?.category !== row.category).map((row) => `${row.file}: ${reasons[row.file]?.category}`);
      expect(misfiled, "decisions filed under another category than REASONS.json says").toEqual([]);
    });

    describe.each(Object.keys(table))("%s", (category) => {
      const cases = rows.filter((row) => row.category === category).map((row) => [row.file, label(row.decision), row.decision] as const);

      it.each(cases)("%s → %s", (file, _label, decision) => {
        const payload = load(name, file);
        const request = "rejected" in decision && decision.request ? ADAPTER_REQUESTS[decision.request] : undefined;
        const validate = (options?: { lenient: boolean }) =>
          payload === NOT_JSON ? notJson : name === "invalid-requests" ? validateBidRequest(payload, options) : validateBidResponse(payload, request, options);
        const strict = validate();
        if (!("rejected" in decision)) {
          if (decision.besides === undefined) expectAccepted(strict);
          else expect(new Set(strict.errors.map((issue) => issue.rule)), describeIssues(strict)).toEqual(new Set(decision.besides));
          const lenient = validate({ lenient: true });
          expectAccepted(lenient);
          for (const rule of decision.besides ?? []) expect(lenient.warnings.some((issue) => issue.rule === rule), rule).toBe(true);
          return;
        }
        expectRejected(strict, decision.rejected, decision.at);
        for (const also of decision.also ?? []) expectRejected(strict, also.rule, also.at);
        if (decision.withAssetIds) expectRejected(validateBidRequest(withAssetIds(payload)), decision.withAssetIds);
        if (decision.lenient) {
          const lenient = validate({ lenient: true });
          if ("warning" in decision.lenient) {
            expectAccepted(lenient);
            expect(lenient.warnings.some((issue) => issue.rule === (decision.lenient as { warning: string }).warning)).toBe(true);
          } else {
            expectRejected(lenient, decision.lenient.rejected);
          }
        }
      });
    });
  });
}

describeDecisions("invalid-requests", INVALID_REQUESTS);
describeDecisions("invalid-responses", INVALID_RESPONSES);
