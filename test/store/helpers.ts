// Shared by the store tests: fact builders, a query builder and a harness that runs CLI commands in-process.
import { vi } from "vitest";
import { buildProgram, exitCodeFor } from "../../service/cli/main.js";

export { demand, demandQuery, supply, supplyQuery } from "./facts.js";

export interface CliRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * Runs `argv` (without "adxkit") through the CLI's own program and exit-code mapping, in
 * process, capturing stdout and stderr.
 */
export async function runCli(argv: string[]): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const capture = (sink: (s: string) => void) => (chunk: string | Uint8Array) => {
    sink(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return true;
  };
  const out = vi.spyOn(process.stdout, "write").mockImplementation(capture((s) => (stdout += s)) as typeof process.stdout.write);
  const err = vi.spyOn(process.stderr, "write").mockImplementation(capture((s) => (stderr += s)) as typeof process.stderr.write);
  const program = (await buildProgram(argv)).configureOutput({ writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) });
  const previous = process.exitCode;
  process.exitCode = undefined;
  let exitCode = 0;
  try {
    await program.parseAsync(argv, { from: "user" });
    exitCode = Number(process.exitCode ?? 0);
  } catch (error) {
    exitCode = exitCodeFor(error, (text) => (stderr += text));
  } finally {
    process.exitCode = previous;
    out.mockRestore();
    err.mockRestore();
  }
  return { stdout, stderr, exitCode };
}

/** The JSON lines of a command's stdout. */
export function jsonLines(text: string): any[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}
