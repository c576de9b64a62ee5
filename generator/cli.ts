/**
 * `npm run generate`: regenerates generated/ from spec/ + templates/ (`--check` only compares),
 * then `npm run compile` builds the bindings and the server from it, so the CLI and the server
 * run what was just generated.
 */
import { generate, type GenerateOptions } from "./generate.js";
import { SpecError } from "./load.js";

/** Runs a generation and prints what happened; returns the process exit code (2: unknown target). */
export async function runGenerate(options: GenerateOptions & { quiet?: boolean }): Promise<number> {
  const log = (line: string) => options.quiet || process.stderr.write(`${line}\n`);
  try {
    const result = await generate({ ...options, onProgress: (step) => log(`adxkit generate: ${step}`) });
    if (options.targets) {
      log(`${options.out ?? "generated/"}: ${result.written} of ${result.files.length} files written (${options.targets.join(", ")}) in ${result.seconds.toFixed(2)} s`);
      return 0;
    }
    if (options.check) {
      if (result.stale.length > 0) {
        process.stderr.write(`generated/ is stale (${result.stale.length} file(s)); run \`npm run generate\`:\n`);
        for (const file of result.stale) process.stderr.write(`  ${file}\n`);
        return 1;
      }
      log(`generated/ is up to date (${result.files.length} files, ${result.seconds.toFixed(2)} s)`);
      return 0;
    }
    log(`generated/: ${result.written} written, ${result.removed} removed, ${result.files.length} files in ${result.seconds.toFixed(2)} s`);
    return 0;
  } catch (error) {
    if (error instanceof SpecError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    if (error instanceof RangeError) {
      process.stderr.write(`adxkit generate: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes("--check");
  runGenerate({ check }).then((code) => process.exit(code));
}
