/** The `adxkit` command line: one binary, one subcommand per job. */
import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { packageRoot } from "../../generator/paths.js";
import { UsageError } from "./errors.js";
import { register as registerGenerate } from "./commands/generate.js";
import { register as registerValidate } from "./commands/validate.js";

const pkg = JSON.parse(readFileSync(`${packageRoot()}/package.json`, "utf8"));

/** Builds the program; commands register themselves. */
export async function buildProgram(): Promise<Command> {
  const program = new Command("adxkit")
    .version(pkg.version)
    .description("adxkit: spec-first toolkit and server for an ad exchange (report APIs A and B, OpenRTB 2.5 bidding C)")
    .showHelpAfterError()
    .exitOverride();
  registerGenerate(program);
  registerValidate(program);
  for (const name of ["ingest", "seed", "accounts", "serve", "bidder", "docs", "demo"]) {
    try {
      const module = await import(`./commands/${name}.js`);
      module.register(program);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw error;
    }
  }
  return program;
}

/** Runs the CLI; returns the exit code. */
export async function main(argv = process.argv): Promise<number> {
  const program = await buildProgram();
  try {
    await program.parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      process.stderr.write(`adxkit: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`adxkit: ${(error as Error).message}\n`);
    return 1;
  }
}
