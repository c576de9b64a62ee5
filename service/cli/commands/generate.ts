/** `adxkit generate [--check] [--target …] [--out DIR]`: regenerate generated/ from spec/ + templates/. */
import type { Command } from "commander";

export function configure(command: Command): void {
  command
    .option("--check", "do not write; exit 1 and name the stale files when generated/ does not match")
    .option("--spec <dir>", "spec folder (default: the package's spec/)")
    .option("--templates <dir>", "templates folder (default: the package's templates/)")
    .option("--out <dir>", "output folder (default: the package's generated/); with one --target, that target's own folder")
    .option("--target <name...>", "emit only these targets (types, validators, codelists, errors, stubs, client, index, documents, docs)")
    .addHelpText(
      "after",
      `
The generated code imports its runtime from @adxkit/bindings/runtime: a project that generates
into its own folder installs @adxkit/bindings beside it.

Examples:
  $ adxkit generate                           # after editing spec/
  $ adxkit generate --check                   # in CI: fails when generated/ is stale
  $ adxkit generate --spec my-spec/ --out src/bindings/
  $ adxkit generate --target docs --out site/`,
    )
    .action(async (options: { check?: boolean; spec?: string; templates?: string; out?: string; target?: string[] }) => {
      // The generator and its packages load only for this command.
      const { runGenerate } = await import("../../../generator/cli.js");
      process.exitCode = await runGenerate({ ...options, targets: options.target });
      // This command runs the compiled adxkit: what it just wrote reaches the CLI and the server
      // only once compiled (npm run generate does both).
      if (process.exitCode === 0 && !options.check && options.out === undefined) {
        process.stderr.write("adxkit generate: the CLI and the server run the compiled bindings; `npm run compile` builds them from what was just generated\n");
      }
    });
}
