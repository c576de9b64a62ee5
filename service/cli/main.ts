/** The `adxkit` command line: one binary, one subcommand per job. */
import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { packageRoot } from "../../generator/paths.js";
import { UsageError } from "./errors.js";
import { register as registerAccounts } from "./commands/accounts.js";
import { register as registerBidder } from "./commands/bidder.js";
import { register as registerDemo } from "./commands/demo.js";
import { register as registerDocs } from "./commands/docs.js";
import { register as registerGenerate } from "./commands/generate.js";
import { register as registerIngest } from "./commands/ingest.js";
import { register as registerSeed } from "./commands/seed.js";
import { register as registerServe } from "./commands/serve.js";
import { register as registerValidate } from "./commands/validate.js";

const pkg = JSON.parse(readFileSync(`${packageRoot()}/package.json`, "utf8"));

/** Builds the program; commands register themselves. */
export async function buildProgram(): Promise<Command> {
  const program = new Command("adxkit")
    .version(pkg.version)
    .description("adxkit: spec-first toolkit and server for an ad exchange (report APIs A and B, OpenRTB 2.5 bidding C)")
    .showHelpAfterError()
    .exitOverride();
  for (const register of [registerGenerate, registerValidate, registerServe, registerDemo, registerIngest, registerSeed, registerAccounts, registerBidder, registerDocs]) {
    register(program);
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
    if (error instanceof UsageError || (error as Error).name === "BidderConfigError") {
      process.stderr.write(`adxkit: ${(error as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`adxkit: ${(error as Error).message}\n`);
    return 1;
  }
}
