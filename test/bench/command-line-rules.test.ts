/**
 * bench/command-line.ts's rules in-process: what exits 0 or 2, and what it says. process.exit and
 * the two streams are replaced for each case; the exit throws so that nothing runs past it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { benchCommand } from "../../bench/command-line.js";

const USAGE = "Usage: npx tsx bench/example.ts [--runs N] [--quick]";
const OPTIONS = { runs: { type: "string" }, quick: { type: "boolean" } } as const;

class Exited extends Error {
  constructor(readonly code: number | undefined) {
    super(`exit ${code}`);
  }
}

/** Runs `read` with the process's exit and output caught: the exit code (none: it returned) and what was written. */
function caught<T>(read: () => T): { code?: number; value?: T; stdout: string; stderr: string } {
  let stdout = "";
  let stderr = "";
  vi.spyOn(process, "exit").mockImplementation((code) => {
    throw new Exited(code as number | undefined);
  });
  vi.spyOn(process.stdout, "write").mockImplementation((text) => {
    stdout += String(text);
    return true;
  });
  vi.spyOn(process.stderr, "write").mockImplementation((text) => {
    stderr += String(text);
    return true;
  });
  try {
    return { value: read(), stdout, stderr };
  } catch (error) {
    if (error instanceof Exited) return { code: error.code, stdout, stderr };
    throw error;
  } finally {
    vi.restoreAllMocks();
  }
}

describe("bench/command-line.ts", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.each([["--help"], ["-h"], ["--runs", "3", "--help"]])("%s prints the usage on stdout and exits 0", (...args) => {
    const run = caught(() => benchCommand(USAGE, OPTIONS, args));
    expect(run).toEqual({ code: 0, stdout: `${USAGE}\n`, stderr: "" });
  });

  it("gives the options and their numbers; unset ones fall back", () => {
    const run = caught(() => {
      const command = benchCommand(USAGE, OPTIONS, ["--runs", "7", "--quick"]);
      return { values: command.values, runs: command.integer("--runs", 3, 1), missing: command.number("--nothing", 2.5) };
    });
    expect(run.code).toBeUndefined();
    expect(run.value).toEqual({ values: { runs: "7", quick: true }, runs: 7, missing: 2.5 });
  });

  it("reads environment variables, an empty one as unset", () => {
    vi.stubEnv("EXAMPLE_ROWS", "1000");
    vi.stubEnv("EXAMPLE_EMPTY", "");
    vi.stubEnv("EXAMPLE_KINDS", "b,a");
    const run = caught(() => {
      const command = benchCommand(USAGE, OPTIONS, []);
      return [command.integer("EXAMPLE_ROWS", 1), command.integer("EXAMPLE_EMPTY", 42), command.number("EXAMPLE_UNSET", 0.5), command.list("EXAMPLE_KINDS", ["a"], ["a", "b", "c"])];
    });
    expect(run.value).toEqual([1000, 42, 0.5, ["b", "a"]]);
  });

  it.each([
    { rule: "an unknown option", args: ["--runz", "3"], says: "Unknown option '--runz'" },
    { rule: "a stray argument", args: ["3"], says: "Unexpected argument '3'" },
    { rule: "an option without its value", args: ["--runs"], says: "Option '--runs <value>' argument missing" },
    { rule: "a value to a flag", args: ["--quick=yes"], says: "--quick" },
  ])("exits 2 on $rule, saying so above the usage", ({ args, says }) => {
    const run = caught(() => benchCommand(USAGE, OPTIONS, args));
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(says);
    expect(run.stderr.endsWith(`\n\n${USAGE}\n`)).toBe(true);
  });

  it.each([
    { rule: "not a number", read: "integer", value: "ten", says: 'EXAMPLE_N must be an integer ≥ 1 (got "ten")' },
    { rule: "a fraction where an integer is asked", read: "integer", value: "2.5", says: 'EXAMPLE_N must be an integer ≥ 1 (got "2.5")' },
    { rule: "below the minimum", read: "integer", value: "0", says: 'EXAMPLE_N must be an integer ≥ 1 (got "0")' },
    { rule: "infinite", read: "number", value: "Infinity", says: 'EXAMPLE_N must be a number ≥ 1 (got "Infinity")' },
    { rule: "a list item not among the choices", read: "list", value: "a,d", says: 'EXAMPLE_N: "d" is not one of a, b, c' },
  ])("exits 2 on an environment value $rule", ({ read, value, says }) => {
    vi.stubEnv("EXAMPLE_N", value);
    const run = caught(() => {
      const command = benchCommand(USAGE, OPTIONS, []);
      return read === "list" ? command.list("EXAMPLE_N", ["a"], ["a", "b", "c"]) : read === "integer" ? command.integer("EXAMPLE_N", 5, 1) : command.number("EXAMPLE_N", 5, 1);
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(says);
  });

  it("exits 2 with the caller's own message (fail)", () => {
    const run = caught(() => benchCommand(USAGE, OPTIONS, []).fail("--skip-load needs --db PATH"));
    expect(run).toEqual({ code: 2, stdout: "", stderr: `--skip-load needs --db PATH\n\n${USAGE}\n` });
  });
});
