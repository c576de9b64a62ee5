/**
 * .ci/audit.mjs decides on `npm audit --json` reports (fixtures in the form npm 7+ prints; the
 * refused one is what this workplace's registry answered): advisories at high or above fail, lower
 * ones pass, a registry that will not answer is a skip unless ADXKIT_AUDIT_REQUIRED=1.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const run = (fixture: string, env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [join(ROOT, ".ci/audit.mjs"), "--report", join(import.meta.dirname, "fixtures", fixture)], { encoding: "utf8", env: { ...process.env, ADXKIT_AUDIT_REQUIRED: "", ...env } });

describe(".ci/audit.mjs", () => {
  it("fails on an advisory at high or above, naming it", () => {
    const result = run("audit-high.json");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("example-parser (high)");
    expect(result.stderr).not.toContain("example-lib (moderate)");
  });

  it("passes when every advisory is below high", () => {
    const result = run("audit-moderate.json");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("no advisory at high or above (info 0, low 2, moderate 1, high 0, critical 0)");
  });

  it("reports a refused audit endpoint as skipped, or as a failure when the audit is required", () => {
    const skipped = run("audit-endpoint-refused.json");
    expect(skipped.status).toBe(0);
    expect(skipped.stdout).toMatch(/SKIPPED: the registry did not answer the audit \(405 Method Not Allowed/);
    const required = run("audit-endpoint-refused.json", { ADXKIT_AUDIT_REQUIRED: "1" });
    expect(required.status).toBe(1);
    expect(required.stderr).toContain("FAILED");
  });
});
