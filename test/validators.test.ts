// Data-driven tests of the generated validators, their code-list API and the `adxkit validate` CLI.
//
// Fixtures: test/fixtures/<kind>/valid/<desc>.json must validate with no error (strict mode) and
// no warning but the recommended fields it leaves out; test/fixtures/<kind>/warning/<rule>--<desc>.json
// is valid with a warning of that rule (a deprecated code, audio only, another taxonomy);
// test/fixtures/<kind>/invalid/<rule>--<desc>.json breaks exactly one rule, named by the file name
// before "--". Bid responses are cross-checked against test/fixtures/bid-response/request.json
// (imp "1" banner, "2" video, "3" native; cur USD and EUR), which is not itself a fixture case.
import { describe, it, expect } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AuctionType,
  Platform,
  iab,
  lenientPolicies,
  namedRules,
  validationRules,
  validators,
  type Normalisation,
  type ValidationIssue,
  type ValidationResult,
} from "@adxkit/bindings";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
const KINDS = [
  "bid-request",
  "bid-response",
  "native-request",
  "native-response",
  "demand-report-request",
  "supply-report-request",
] as const;
type Kind = (typeof KINDS)[number];

/** The request every bid-response fixture answers. */
const RESPONSE_REQUEST_FILE = join(FIXTURES, "bid-response", "request.json");
const responseRequest: unknown = JSON.parse(readFileSync(RESPONSE_REQUEST_FILE, "utf8"));

/**
 * The invalid fixtures lenient mode accepts, with the changes it makes (test/fixtures/lenient.json);
 * every other invalid fixture stays rejected by its rule.
 */
const LENIENT: Record<string, Normalisation[]> = JSON.parse(readFileSync(join(FIXTURES, "lenient.json"), "utf8")).accepted;

interface Fixture {
  kind: Kind;
  name: string;
  file: string;
  payload: unknown;
  /** Invalid and warning fixtures: the rule the file breaks or warns of (its name before "--"). */
  rule?: string;
}

type Folder = "valid" | "warning" | "invalid";

/** The spec's own examples (spec/examples/<kind>/, shown on the docs site) are valid fixtures too. */
const SPEC_EXAMPLES = fileURLToPath(new URL("../spec/examples/", import.meta.url));

function readFixtures(kind: Kind, folder: Folder): Fixture[] {
  const fromSpec = folder === "valid" && existsSync(join(SPEC_EXAMPLES, kind)) ? readFolder(kind, join(SPEC_EXAMPLES, kind), folder) : [];
  return [...readFolder(kind, join(FIXTURES, kind, folder), folder), ...fromSpec];
}

function readFolder(kind: Kind, dir: string, folder: Folder): Fixture[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => ({
      kind,
      name,
      file: join(dir, name),
      payload: JSON.parse(readFileSync(join(dir, name), "utf8")),
      rule: folder === "valid" ? undefined : name.split("--")[0],
    }));
}

const validFixtures = KINDS.flatMap((kind) => readFixtures(kind, "valid"));
const invalidFixtures = KINDS.flatMap((kind) => readFixtures(kind, "invalid"));
const warningFixtures = KINDS.flatMap((kind) => readFixtures(kind, "warning"));

function validate(fixture: Fixture, lenient: boolean, recommended = true): ValidationResult {
  const request = fixture.kind === "bid-response" ? responseRequest : undefined;
  return validators[fixture.kind](fixture.payload, request, { lenient, recommended });
}

/** Rules whose issues are warnings in every mode (spec/errors.yaml severity: warning). */
const WARNING_RULES = [...validationRules, ...namedRules].filter((r) => r.severity === "warning").map((r) => r.id);

const rulesOf = (issues: readonly ValidationIssue[]) => [...new Set(issues.map((issue) => issue.rule))].sort();

const keyOf = (fixture: Fixture) => `${fixture.kind}/${fixture.name}`;

describe("fixtures", () => {
  it("meet the minimum counts: at least 30 valid and 60 invalid, every kind represented", () => {
    expect(validFixtures.length).toBeGreaterThanOrEqual(30);
    expect(invalidFixtures.length).toBeGreaterThanOrEqual(60);
    for (const kind of KINDS) {
      expect(validFixtures.filter((f) => f.kind === kind).length, `${kind} valid`).toBeGreaterThan(0);
      expect(invalidFixtures.filter((f) => f.kind === kind).length, `${kind} invalid`).toBeGreaterThan(0);
    }
  });

  it("name rules that spec/errors.yaml declares; warning fixtures name a rule of severity warning", () => {
    const known = new Set([...validationRules.map((r) => r.id), ...namedRules.map((r) => r.id)]);
    const unknown = [...invalidFixtures, ...warningFixtures].filter((f) => !known.has(f.rule!)).map((f) => `${f.kind}/${f.name}`);
    expect(unknown).toEqual([]);
    expect(warningFixtures.filter((f) => !WARNING_RULES.includes(f.rule!)).map((f) => f.name)).toEqual([]);
    expect(warningFixtures.length).toBeGreaterThanOrEqual(5);
  });

  it("bid-response/request.json is a valid bid request with imps 1 (banner), 2 (video), 3 (native) and cur USD, EUR", () => {
    const request = responseRequest as { imp: { id: string }[]; cur: string[] };
    expect(validators["bid-request"](request)).toEqual({ valid: true, errors: [], warnings: [] });
    expect(request.imp.map((imp) => imp.id)).toEqual(["1", "2", "3"]);
    expect(request.cur).toEqual(["USD", "EUR"]);
  });

  it("the lenient table names invalid fixtures only", () => {
    const names = new Set(invalidFixtures.map(keyOf));
    expect(Object.keys(LENIENT).filter((name) => !names.has(name))).toEqual([]);
  });
});

describe.each(KINDS)("%s", (kind) => {
  const valid = validFixtures.filter((f) => f.kind === kind);
  const invalid = invalidFixtures.filter((f) => f.kind === kind);

  const warned = warningFixtures.filter((f) => f.kind === kind);

  it.each(valid.map((f) => [f.name, f] as const))("valid/%s is valid in strict mode, warned of nothing but recommended fields", (_name, fixture) => {
    const result = validate(fixture, false);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(rulesOf(result.warnings).filter((rule) => rule !== "recommended")).toEqual([]);
    expect(validate(fixture, false, false).warnings).toEqual([]);
  });

  it.each(warned.map((f) => [f.name, f] as const))("warning/%s is valid in both modes, with a warning of its rule", (_name, fixture) => {
    for (const lenient of [false, true]) {
      const result = validate(fixture, lenient, false);
      expect(result.errors).toEqual([]);
      expect(result.valid).toBe(true);
      expect(rulesOf(result.warnings)).toEqual([fixture.rule]);
    }
  });

  it.each(invalid.map((f) => [f.name, f] as const))("invalid/%s is rejected in strict mode by its rule alone", (_name, fixture) => {
    const result = validate(fixture, false);
    expect(result.valid).toBe(false);
    expect(result.errors.some((issue) => issue.rule === fixture.rule)).toBe(true);
    // The fixture breaks exactly one rule: every error carries it.
    expect(rulesOf(result.errors)).toEqual([fixture.rule]);
    for (const issue of result.errors) {
      expect(issue.path === "" || issue.path.startsWith("/")).toBe(true);
      expect(issue.message).not.toBe("");
    }
  });

  it.each(invalid.map((f) => [f.name, f] as const))("invalid/%s in lenient mode", (_name, fixture) => {
    const lenient = validate(fixture, true);
    const expected = LENIENT[keyOf(fixture)];
    if (expected === undefined) {
      expect(lenient.valid).toBe(false);
      expect(lenient.errors.some((issue) => issue.rule === fixture.rule)).toBe(true);
      expect(lenient.payload).toBeUndefined();
      return;
    }
    expect(lenient.errors).toEqual([]);
    expect(lenient.valid).toBe(true);
    expect(lenient.warnings.some((issue) => issue.rule === fixture.rule)).toBe(true);
    // Long values (a native payload's JSON text) are left out of the table: the others are compared.
    expect(lenient.normalisations ?? []).toEqual(expected.map((change) => expect.objectContaining(change)));
    if (lenient.payload === undefined) return;
    // The changed payload is what a tolerant exchange uses: strictly, it breaks only warn-only rules.
    const again = validators[fixture.kind](lenient.payload, fixture.kind === "bid-response" ? responseRequest : undefined, { recommended: false });
    expect(again.errors.filter((issue) => lenientPolicies[issue.rule]?.treatment !== "warn")).toEqual([]);
    // ...and the input is left as it was.
    expect(fixture.payload).toEqual(JSON.parse(readFileSync(fixture.file, "utf8")));
  });
});

describe("messages (test/fixtures/messages.json)", () => {
  // Every issue of each case, exactly: what was found and what was expected, in one round.
  const { cases } = JSON.parse(readFileSync(join(FIXTURES, "messages.json"), "utf8")) as {
    cases: { kind: Kind; fixture: string; errors: ValidationIssue[]; warnings: ValidationIssue[] }[];
  };

  it("cover the message of every kind of schema keyword the issue of the validators named, and a payload with several problems", () => {
    const rules = new Set(cases.flatMap((c) => c.errors.map((issue) => issue.rule)));
    for (const rule of ["type", "required", "range", "enum", "codelist", "format", "length", "items", "filter-not-offered", "seatbid-bid-nonempty"]) expect(rules.has(rule), rule).toBe(true);
    expect(cases.some((c) => new Set(c.errors.map((issue) => issue.rule)).size >= 5)).toBe(true);
  });

  it.each(cases.map((c) => [`${c.kind}/${c.fixture}`, c] as const))("%s", (_name, c) => {
    const payload = JSON.parse(readFileSync(join(FIXTURES, c.kind, c.fixture), "utf8"));
    const result = validators[c.kind](payload, c.kind === "bid-response" ? responseRequest : undefined, { recommended: false });
    expect(result.errors).toEqual(c.errors);
    expect(result.warnings).toEqual(c.warnings);
  });

  it("schema errors do not hide the rules: a payload with both gets every issue in one round", () => {
    const c = cases.find((entry) => entry.fixture.startsWith("several/"))!;
    const rules = c.errors.map((issue) => issue.rule);
    expect(rules).toEqual(expect.arrayContaining(["type", "range", "format", "enum", "imp-has-media", "imp-id-unique", "site-app-exclusive"]));
  });
});

describe("lenient table", () => {
  it("covers every rule that declares a lenient treatment other than error", () => {
    const covered = new Set(Object.entries(LENIENT).flatMap(([name, changes]) => [name.split("/")[1].split("--")[0], ...changes.map((c) => c.rule)]));
    covered.add("imp-media-supported"); // a warning fixture (valid in strict mode): the drop is asserted below
    const declared = Object.entries(lenientPolicies).filter(([, policy]) => policy.treatment !== "error").map(([rule]) => rule);
    expect(declared.filter((rule) => !covered.has(rule))).toEqual([]);
  });

  it("keeps a native payload that is not JSON an error on a native-only imp, drops imp.native beside banner or video, and warns of Native 1.2 problems inside JSON", () => {
    const names = Object.keys(LENIENT);
    expect(names.filter((name) => name.includes("native-request-json--") && !name.includes("beside"))).toEqual([]);
    expect(LENIENT["bid-request/native-request-json--not-json-beside-banner.json"]).toEqual([{ path: "/imp/0/native", rule: "native-request-json", action: "drop" }]);
    expect(LENIENT["bid-request/native-asset-id-unique--embedded-payload-two-assets-id-2.json"]).toEqual([]);
  });

  it("drops an audio-only imp, and leaves a request without imps when it was the only one (the exchange answers 204)", () => {
    const fixture = warningFixtures.find((f) => f.name.startsWith("imp-media-supported--"))!;
    const result = validate(fixture, true, false);
    expect(result.valid).toBe(true);
    expect(result.normalisations).toEqual([{ path: "/imp/0", rule: "imp-media-supported", action: "drop" }]);
    expect((result.payload as { imp: unknown[] }).imp).toEqual([]);
  });
});

describe("code-list API", () => {
  it("Platform: members, labels, deprecation, parsing", () => {
    expect(Platform.Android).toBe(2);
    expect(Platform.label(3)).toBe("Other");
    expect(Platform.isDeprecated(3)).toBe(true);
    expect(Platform.isDeprecated(2)).toBe(false);
    expect(Platform.parse("android")).toBe(2);
    expect(Platform.parse("Roku-type streaming device")).toBe(12);
    expect(Platform.parse("nope")).toBeUndefined();
    expect(Platform.has(7)).toBe(false);
  });

  it("AuctionType is an open list: values above 500 are exchange-specific", () => {
    expect(AuctionType.FirstPrice).toBe(1);
    expect(AuctionType.has(1)).toBe(true);
    expect(AuctionType.has(501)).toBe(true);
    expect(AuctionType.has(500)).toBe(false);
    expect(AuctionType.has(3)).toBe(false);
  });

  it("iab: existence, hierarchy and block lists", () => {
    expect(iab.isCategory("IAB19-15")).toBe(true);
    expect(iab.label("IAB19-15")).toBe("");
    expect(iab.isCategory("IAB27")).toBe(false);
    expect(iab.isCategory("IAB24-1")).toBe(false);
    expect(iab.isCategory("IAB19-37")).toBe(false);
    expect(iab.parent("IAB1-2")).toBe("IAB1");
    expect(iab.parent("IAB1")).toBeUndefined();
    expect(iab.isBlockedBy("IAB1-2", ["IAB1"])).toBe(true);
    expect(iab.isBlockedBy("IAB1", ["IAB1-2"])).toBe(false);
    expect(iab.isBlockedBy("IAB1-2", new Set(["IAB1-2"]))).toBe(true);
    expect(iab.children("IAB24")).toEqual([]);
    expect(iab.children("IAB1")).toHaveLength(7);
  });
});

// Each test starts the CLI (up to 6 s on a busy machine).
describe("adxkit validate (CLI)", { timeout: 120_000 }, () => {
  const bin = join(ROOT, "bin", "adxkit.js");
  const run = (args: string[], input?: string) => {
    const result = spawnSync(process.execPath, [bin, "validate", ...args], { cwd: ROOT, input, encoding: "utf8", timeout: 60_000 });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const fixture = (kind: Kind, folder: "valid" | "invalid", name: string) => join(FIXTURES, kind, folder, `${name}.json`);
  const expectUsageError = (result: { code: number | null; stderr: string }) => {
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  };

  it("is built (npm test builds dist/ first)", () => {
    expect(existsSync(join(ROOT, "dist", "service", "cli", "main.js"))).toBe(true);
  });

  it("exits 0 when every file is valid", () => {
    const files = validFixtures.filter((f) => f.kind === "bid-request").map((f) => f.file);
    const result = run(["bid-request", ...files]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n").filter((line) => line.startsWith("valid")).length).toBe(files.length);
  });

  it("exits 1 when any file is invalid, naming the file and the rule", () => {
    const bad = fixture("bid-request", "invalid", "range--geo-lat-above-90");
    const result = run(["bid-request", fixture("bid-request", "valid", "banner-minimal"), bad]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`INVALID ${bad}`);
    expect(result.stdout).toContain("[range]");
    expect(result.stdout).toContain("/device/geo/lat");
  });

  it("exits 2 with one line on stderr for an unknown kind", () => {
    expectUsageError(run(["bid-requets", fixture("bid-request", "valid", "banner-minimal")]));
  });

  it("gives an unreadable file its own result line (rule read), judges the others, and exits 2", () => {
    const missing = join(FIXTURES, "does-not-exist.json");
    const good = fixture("bid-request", "valid", "banner-minimal");
    const result = run(["bid-request", missing, good, "--json"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.file, line.valid, line.errors.map((e: ValidationIssue) => e.rule)])).toEqual([
      [missing, false, ["read"]],
      [good, true, []],
    ]);
    expect(lines[0].errors[0].message).toContain("ENOENT");
  });

  it("gives a file that is not JSON its own result line (rule json), judges the others, and exits 1", () => {
    const dir = mkdtempSync(join(tmpdir(), "adxkit-cli-"));
    try {
      const file = join(dir, "broken.json");
      writeFileSync(file, '{"id": "r1", "imp": [');
      const good = fixture("bid-request", "valid", "banner-minimal");
      const result = run(["bid-request", good, file]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe("");
      expect(result.stdout).toContain(`valid   ${good}`);
      expect(result.stdout).toContain(`INVALID ${file}`);
      expect(result.stdout).toMatch(/error {3}\/ {2}\[json\] .*broken\.json is not JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("exits with the worst outcome: unreadable (2) over invalid (1) over valid (0)", () => {
    const bad = fixture("bid-request", "invalid", "range--geo-lat-above-90");
    expect(run(["bid-request", bad, join(FIXTURES, "does-not-exist.json")]).code).toBe(2);
  });

  it("exits 2 with one line on stderr when the --request file cannot be used", () => {
    const result = run(["bid-response", fixture("bid-request", "valid", "banner-minimal"), "--request", join(FIXTURES, "does-not-exist.json")]);
    expectUsageError(result);
    expect(result.stdout).toBe("");
  });

  it("--json prints one JSON line per file: {file, valid, errors, warnings}", () => {
    const good = fixture("bid-request", "valid", "banner-minimal");
    const bad = fixture("bid-request", "invalid", "imp-id-unique--two-imps-with-id-1");
    const result = run(["bid-request", good, bad, "--json"]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines).toHaveLength(2);
    // banner-minimal leaves out recommended fields: valid, with their warnings.
    expect(lines[0]).toEqual({ file: good, valid: true, errors: [], warnings: expect.arrayContaining([expect.objectContaining({ path: "/device", rule: "recommended" })]) });
    expect(lines[0].warnings.every((issue: ValidationIssue) => issue.rule === "recommended")).toBe(true);
    expect(Object.keys(lines[1]).sort()).toEqual(["errors", "file", "valid", "warnings"]);
    expect(lines[1].file).toBe(bad);
    expect(lines[1].valid).toBe(false);
    expect(lines[1].errors).toEqual([expect.objectContaining({ path: "/imp/1/id", rule: "imp-id-unique" })]);
  });

  it("reads standard input for -", () => {
    const ok = run(["bid-request", "-", "--json"], readFileSync(fixture("bid-request", "valid", "banner-minimal"), "utf8"));
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ file: "-", valid: true, errors: [] });
    const bad = run(["bid-request", "-"], JSON.stringify({ id: "r1", imp: [] }));
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain("[items]");
  });

  it("--lenient turns a code-list error into a warning", () => {
    const file = fixture("bid-request", "invalid", "codelist--banner-pos-99");
    const strict = run(["bid-request", file, "--json"]);
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.stdout).errors).toEqual([expect.objectContaining({ path: "/imp/0/banner/pos", rule: "codelist" })]);
    const lenient = run(["bid-request", file, "--json", "--lenient"]);
    expect(lenient.code).toBe(0);
    const line = JSON.parse(lenient.stdout);
    expect(line.valid).toBe(true);
    expect(line.errors).toEqual([]);
    expect(line.warnings).toEqual([expect.objectContaining({ path: "/imp/0/banner/pos", rule: "codelist" })]);
  });

  it("--lenient --json carries the changes and the changed payload", () => {
    const file = fixture("bid-request", "invalid", "format--device-ip-wildcard");
    const line = JSON.parse(run(["bid-request", file, "--json", "--lenient"]).stdout);
    expect(line.valid).toBe(true);
    expect(line.normalisations).toEqual([{ path: "/device/ip", rule: "format", action: "drop" }]);
    expect(line.payload.device.ip).toBeUndefined();
  });

  it("--request applies the cross-checks of a bid response", () => {
    const file = fixture("bid-response", "invalid", "bid-impid-exists--impid-4");
    expect(run(["bid-response", file]).code).toBe(0);
    const checked = run(["bid-response", file, "--request", RESPONSE_REQUEST_FILE, "--json"]);
    expect(checked.code).toBe(1);
    expect(JSON.parse(checked.stdout).errors).toEqual([expect.objectContaining({ path: "/seatbid/0/bid/0/impid", rule: "bid-impid-exists" })]);
    const other = run(["bid-response", fixture("bid-response", "invalid", "response-id-matches--answers-another-request"), "--request", RESPONSE_REQUEST_FILE]);
    expect(other.code).toBe(1);
    expect(other.stdout).toContain("[response-id-matches]");
  });

  it("--request is refused for other kinds (exit 2)", () => {
    expectUsageError(run(["bid-request", fixture("bid-request", "valid", "banner-minimal"), "--request", RESPONSE_REQUEST_FILE]));
  });
});
