// Which table a load sums each rollup from (service/store/rollup-steps.ts): the smallest one
// filled before it that holds its grain and dimensions. Summing from a larger one gives the same
// rows (report-property.test.ts compares every rollup with the hourly facts); this pins the cost.
import { describe, expect, it } from "vitest";
import { rollupSteps } from "../../service/store/rollup-steps.js";

const sources = (side: "supply" | "demand") => Object.fromEntries(rollupSteps(side).map((s) => [s.table.name, s.source.name]));

describe("rollupSteps", () => {
  it("sums each supply rollup from the smallest table filled before it", () => {
    expect(sources("supply")).toEqual({
      daily: "hourly",
      daily_summary: "daily",
      daily_apps: "daily",
      // The daily summary (no identifier besides the publisher), not daily_apps (apps: 179 k rows a month against 106 k).
      daily_countries: "daily_summary",
      monthly: "daily",
      // A coarser grain first: the monthly rollup (50 k rows a month at the bench's size) before the daily summary (106 k).
      monthly_summary: "monthly",
    });
  });

  it("fills every source before the rollups that read it, and marks it read", () => {
    const steps = rollupSteps("supply");
    for (const [at, step] of steps.entries()) {
      if (step.source.name === "hourly") continue;
      const source = steps.findIndex((s) => s.table.name === step.source.name);
      expect(source).toBeLessThan(at);
      expect(steps[source].read).toBe(true);
    }
    expect(steps.filter((s) => s.read).map((s) => s.table.name).sort()).toEqual(["daily", "daily_summary", "monthly"]);
  });

  it("sums the demand side's monthly rollup from its daily one", () => {
    expect(sources("demand")).toEqual({ daily: "hourly", monthly: "daily" });
  });
});
