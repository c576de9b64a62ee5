/** `adxkit validate <kind> <file...>`: validate payloads with the generated validators. */
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { validators } from "@adxkit/bindings";
import { UsageError } from "../errors.js";

async function readInput(file: string): Promise<string> {
  if (file !== "-") return readFile(file, "utf8");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function readJson(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readInput(file);
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} ${file} is not JSON: ${(error as Error).message}`);
  }
}

export function configure(command: Command): void {
  const kinds = Object.keys(validators).filter((k) => !k.endsWith("-response") || k === "bid-response" || k === "native-response");
  command
    .argument("<kind>", `one of ${kinds.join(", ")}`)
    .argument("<file...>", "JSON files; - reads standard input")
    .option("--request <file>", "bid-response only: the bid request it answers, for the cross-checks")
    .option("--lenient", "report unknown code-list values as warnings, not errors")
    .option("--json", "print one JSON line per file: {file, valid, errors, warnings}")
    .addHelpText(
      "after",
      `
Examples:
  $ adxkit validate bid-request test/fixtures/bid-request/valid/*.json
  $ adxkit validate bid-response answer.json --request request.json --json
  $ curl -s … | adxkit validate bid-request - --lenient`,
    )
    .action(async (kind: string, files: string[], options: { request?: string; lenient?: boolean; json?: boolean }) => {
      const validator = validators[kind];
      if (!validator) throw new UsageError(`unknown kind "${kind}"; expected one of ${kinds.join(", ")}`);
      if (options.request && kind !== "bid-response") throw new UsageError("--request applies to bid-response only");
      const request = options.request ? await readJson(options.request, "request") : undefined;
      // Read every file first: an unreadable file is a usage error (exit 2) before any verdict.
      const payloads = [];
      for (const file of files) payloads.push({ file, payload: await readJson(file, "file") });
      let allValid = true;
      for (const { file, payload } of payloads) {
        const result = validator(payload, request, { lenient: options.lenient === true });
        allValid &&= result.valid;
        if (options.json) {
          process.stdout.write(JSON.stringify({ file, valid: result.valid, errors: result.errors, warnings: result.warnings }) + "\n");
          continue;
        }
        process.stdout.write(`${result.valid ? "valid  " : "INVALID"} ${file}\n`);
        for (const e of result.errors) process.stdout.write(`  error   ${e.path || "/"}  [${e.rule}] ${e.message}\n`);
        for (const w of result.warnings) process.stdout.write(`  warning ${w.path || "/"}  [${w.rule}] ${w.message}\n`);
      }
      process.exitCode = allValid ? 0 : 1;
    });
}
