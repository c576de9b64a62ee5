/** `adxkit validate <kind> <file...>`: validate payloads with the generated validators. */
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { validators, type ValidationResult } from "@adxkit/bindings";
import { UsageError } from "../errors.js";

async function readInput(file: string): Promise<string> {
  if (file !== "-") return readFile(file, "utf8");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A file's payload, or the result that judges it when it cannot be read (rule read) or parsed (rule json). */
type Loaded = { payload: unknown } | { failed: ValidationResult; unreadable: boolean };

async function load(file: string): Promise<Loaded> {
  let text: string;
  try {
    text = await readInput(file);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { failed: failure("read", `cannot read ${file}: ${reason}`), unreadable: true };
  }
  try {
    return { payload: JSON.parse(text) };
  } catch (error) {
    return { failed: failure("json", `${file} is not JSON: ${(error as Error).message}`), unreadable: false };
  }
}

const failure = (rule: "read" | "json", message: string): ValidationResult => ({ valid: false, errors: [{ path: "", rule, message }], warnings: [] });

/** Exit codes, worst last: every file valid, some payload invalid (or not JSON), some file unreadable. */
const EXIT = { valid: 0, invalid: 1, unreadable: 2 } as const;

export function configure(command: Command): void {
  const kinds = Object.keys(validators).filter((k) => !k.endsWith("-response") || k === "bid-response" || k === "native-response");
  command
    .argument("<kind>", `one of ${kinds.join(", ")}`)
    .argument("<file...>", "JSON files; - reads standard input")
    .option("--request <file>", "bid-response only: the bid request it answers, for the cross-checks")
    .option("--lenient", "apply the spec's lenient policy: warn, drop or normalise what a tolerant exchange would (the warnings say what was done)")
    .option("--json", "print one JSON line per file: {file, valid, errors, warnings} (and normalisations, payload in lenient mode when something changed)")
    .addHelpText(
      "after",
      `
Every file gets its own verdict: one that cannot be read (rule read) or parsed (rule json) is
invalid, and the others are still judged. Exit code: 0 every file valid, 1 some file invalid or
not JSON, 2 some file unreadable (or bad usage).

Examples:
  $ adxkit validate bid-request test/fixtures/bid-request/valid/*.json
  $ adxkit validate bid-response answer.json --request request.json --json
  $ curl -s … | adxkit validate bid-request - --lenient`,
    )
    .action(async (kind: string, files: string[], options: { request?: string; lenient?: boolean; json?: boolean }) => {
      const validator = validators[kind];
      if (!validator) throw new UsageError(`unknown kind "${kind}"; expected one of ${kinds.join(", ")}`);
      if (options.request && kind !== "bid-response") throw new UsageError("--request applies to bid-response only");
      let request: unknown;
      if (options.request) {
        // The request every answer is checked against is an argument, not a verdict: unusable, it is bad usage.
        const loaded = await load(options.request);
        if ("failed" in loaded) throw new UsageError(`--request: ${loaded.failed.errors[0].message}`);
        request = loaded.payload;
      }
      let exit: number = EXIT.valid;
      for (const file of files) {
        const loaded = await load(file);
        const result = "failed" in loaded ? loaded.failed : validator(loaded.payload, request, { lenient: options.lenient === true });
        if ("failed" in loaded && loaded.unreadable) exit = Math.max(exit, EXIT.unreadable);
        else if (!result.valid) exit = Math.max(exit, EXIT.invalid);
        if (options.json) {
          const changed = result.normalisations !== undefined ? { normalisations: result.normalisations, payload: result.payload } : {};
          process.stdout.write(JSON.stringify({ file, valid: result.valid, errors: result.errors, warnings: result.warnings, ...changed }) + "\n");
          continue;
        }
        process.stdout.write(`${result.valid ? "valid  " : "INVALID"} ${file}\n`);
        for (const e of result.errors) process.stdout.write(`  error   ${e.path || "/"}  [${e.rule}] ${e.message}\n`);
        for (const w of result.warnings) process.stdout.write(`  warning ${w.path || "/"}  [${w.rule}] ${w.message}\n`);
      }
      process.exitCode = exit;
    });
}
