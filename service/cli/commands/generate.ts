/** `adxkit generate [--check]`: regenerate generated/ from spec/ + templates/. */
import type { Command } from "commander";
import { runGenerate } from "../../../generator/cli.js";

export function register(program: Command): void {
  program
    .command("generate")
    .description("regenerate types, validators, code lists, stubs, client and docs from spec/ + templates/")
    .option("--check", "do not write; exit 1 and name the stale files when generated/ does not match")
    .option("--spec <dir>", "spec folder (default: the package's spec/)")
    .option("--templates <dir>", "templates folder (default: the package's templates/)")
    .option("--out <dir>", "output folder (default: the package's generated/)")
    .addHelpText(
      "after",
      `
Examples:
  $ adxkit generate            # after editing spec/
  $ adxkit generate --check    # in CI: fails when generated/ is stale`,
    )
    .action(async (options: { check?: boolean; spec?: string; templates?: string; out?: string }) => {
      process.exitCode = await runGenerate(options);
    });
}
