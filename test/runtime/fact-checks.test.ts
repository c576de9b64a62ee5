// The fact checks of the runtime (what the generated factProblem calls per field): listed cases
// from fact-checks.json, each refused one naming the rule it breaks, and properties for the
// text checks.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { codeCheck, countCheck, type FieldCheck, hourCheck, moneyCheck, stringCheck, textCheck, validHour, withinLength } from "../../runtime/fact-checks.js";
import cases from "./fact-checks.json" with { type: "json" };

const checks: Record<keyof typeof cases, FieldCheck> = { hourCheck, codeCheck, countCheck, moneyCheck, stringCheck };

describe("listed values", () => {
  for (const [name, list] of Object.entries(cases) as [keyof typeof cases, { value: unknown; refused: boolean; rule?: string }[]][]) {
    it.each(list)(`${name} %j`, ({ value, refused }) => {
      const problem = checks[name](value);
      if (refused) expect(problem).toMatch(/^must /);
      else expect(problem).toBeUndefined();
    });
  }

  it("moneyCheck refuses what is not finite", () => {
    for (const value of [Number.POSITIVE_INFINITY, Number.NaN]) expect(moneyCheck(value)).toMatch(/finite/);
  });

  it("validHour answers the same when asked again (its cache of hours holds valid ones only)", () => {
    for (const text of ["2026-11-27T05:00:00", "2026-13-01T00:00:00", "2026-11-27T05:00:00", "2026-13-01T00:00:00"]) {
      expect(validHour(text)).toBe(!text.startsWith("2026-13"));
    }
  });
});

describe("text checks", () => {
  it("withinLength counts code points, as JSON Schema's maxLength does", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.integer({ min: 0, max: 40 }), (text, max) => {
        expect(withinLength(text, max)).toBe([...text].length <= max);
      }),
      { numRuns: 500 },
    );
  });

  it("textCheck says which of its rules a value breaks", () => {
    const check = textCheck({ empty: false, max: 5, pattern: "^[a-z]+$" });
    expect(check("abc")).toBeUndefined();
    expect(check("")).toBe("must not be empty");
    expect(check("abcdef")).toBe("must be at most 5 characters");
    expect(check("ab1")).toBe("must match ^[a-z]+$");
    expect(check(3)).toBe("must be a string");
    const optional = textCheck({ empty: true, pattern: "^[A-Z]{3}$" });
    expect(optional("")).toBeUndefined();
    expect(optional("usa")).toBe('must match ^[A-Z]{3}$ or be ""');
    expect(textCheck({ empty: false, max: 2 })("😀😀")).toBeUndefined();
  });
});
