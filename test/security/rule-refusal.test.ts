// The service answers a broken rule with the HTTP status the spec declares for it (errors.yaml
// http-status), in the interface's error form; a rule without one is a programming error.
import { describe, expect, it } from "vitest";
import { namedRules } from "@adxkit/bindings";
import { httpStatusOf, ruleRefusal } from "../../service/rule-refusal.js";

describe("ruleRefusal", () => {
  it("answers every rule that declares an http-status with it", () => {
    const declared = namedRules.filter((r) => r.httpStatus !== undefined);
    expect(declared.map((r) => r.id)).toEqual(expect.arrayContaining(["auction-key-invalid", "billing-not-recorded", "admin-key-throttled"]));
    for (const rule of declared) {
      expect(ruleRefusal(rule.id, "why", { path: "/x", headers: { "retry-after": "1" } })).toEqual({
        status: rule.httpStatus,
        headers: { "retry-after": "1" },
        body: { errors: [{ path: "/x", rule: rule.id, message: "why" }] },
      });
    }
  });

  it("refuses a rule the spec gives no http-status", () => {
    expect(() => httpStatusOf("imp-id-unique")).toThrow(/imp-id-unique declares no http-status/);
  });
});
