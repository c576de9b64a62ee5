/**
 * The `adxkit` command line: one binary, one subcommand per job. Each command's code (and with it
 * the generator, the server, DuckDB) is imported only when that command runs, so
 * `adxkit --version` and `adxkit validate` start in a few tens of milliseconds.
 */
import { Command, CommanderError } from "commander";
import { packageVersion } from "../package.js";
import { UsageError } from "./errors.js";

/** What a command module exports: its arguments, options and action, added to its command. */
interface CommandModule {
  configure(command: Command): void;
}

interface CommandEntry {
  name: string;
  description: string;
  /** Writes the data files (database, spool, keys): runs under PRIVATE_UMASK. */
  writesData?: boolean;
  load(): Promise<CommandModule>;
}

/** Every command, in the order `adxkit --help` lists them. */
const commands: readonly CommandEntry[] = [
  { name: "generate", description: "regenerate types, validators, code lists, stubs, client and docs from spec/ + templates/", load: () => import("./commands/generate.js") },
  { name: "validate", description: "validate JSON payloads against the spec (exit 0 all valid, 1 any invalid, 2 usage or unreadable file)", load: () => import("./commands/validate.js") },
  { name: "serve", writesData: true, description: "serve report APIs A (/api/report/demand_report_v2) and B (/api/report/v1), the exchange (/openrtb2/auction) and the docs (/docs)", load: () => import("./commands/serve.js") },
  { name: "demo", writesData: true, description: "run the server with demo data, three reference bidders and a little traffic (npm start)", load: () => import("./commands/demo.js") },
  { name: "ingest", writesData: true, description: "load hourly facts (NDJSON, one fact per line) into the report store; a file with any bad line loads nothing", load: () => import("./commands/ingest.js") },
  { name: "seed", writesData: true, description: "load deterministic synthetic traffic: N supply facts over the last D days, plus about N/10 demand facts", load: () => import("./commands/seed.js") },
  { name: "accounts", writesData: true, description: "create, list and revoke accounts (the x-userid / x-authorization pairs of the report APIs) and issue auction keys", load: () => import("./commands/accounts.js") },
  { name: "settle", description: "settle billed impressions that are due into per-day sums, once, on a ClickHouse store (adxkit serve does it every minute)", load: () => import("./commands/settle.js") },
  { name: "billing-keys", writesData: true, description: "list and rotate the keys that seal billing tokens (add, promote, retire)", load: () => import("./commands/billing-keys.js") },
  { name: "bidder", description: "run the reference bidder: answers bid requests with banner HTML, native JSON or VAST 3.0, counts win and billing notices", load: () => import("./commands/bidder.js") },
  { name: "docs", description: "write the documentation site (static HTML, works from file:// and any static host) to a folder", load: () => import("./commands/docs.js") },
];

/** The command a command line runs (`adxkit validate …`, `adxkit help validate`), if any. */
function commandNamed(args: readonly string[]): CommandEntry | undefined {
  const words = args.filter((a) => !a.startsWith("-"));
  const name = words[0] === "help" ? words[1] : words[0];
  return commands.find((c) => c.name === name);
}

/**
 * Builds the program for one command line: every command is listed with its description, and
 * only the one being run (or asked for help) gets its options and action, loaded then.
 */
export async function buildProgram(args: readonly string[] = []): Promise<Command> {
  const program = new Command("adxkit")
    .version(packageVersion())
    .description("adxkit: spec-first toolkit and server for an ad exchange (report APIs A and B, OpenRTB 2.5 bidding C)")
    .exitOverride();
  const running = commandNamed(args);
  for (const entry of commands) {
    const command = program.command(entry.name).description(entry.description);
    if (entry === running) (await entry.load()).configure(command);
  }
  return program;
}

/**
 * The exit code of a command that threw, after saying why on stderr: 2 for usage (commander's own
 * errors, which it has already printed, and UsageError), 1 for anything else.
 */
export function exitCodeFor(error: unknown, writeErr: (text: string) => void = (text) => process.stderr.write(text)): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
  writeErr(`adxkit: ${(error as Error).message}\n`);
  // A bad bidders or currency rates file is a bad argument: its problems are listed, exit 2.
  return error instanceof UsageError || ["BidderConfigError", "CurrencyRatesError"].includes((error as Error).name) ? 2 : 1;
}

/** Commander's errors that are not mistakes: --help and --version end the command with exit 0. */
const notMistakes = new Set(["commander.helpDisplayed", "commander.help", "commander.version"]);

/**
 * Runs the CLI; returns the exit code. A mistake in the command line (commander has printed its
 * one line, naming the flag and what it takes) is followed by the command's usage line.
 */
export async function main(argv = process.argv): Promise<number> {
  const program = await buildProgram(argv.slice(2));
  if (commandNamed(argv.slice(2))?.writesData === true) process.umask((await import("../private-files.js")).PRIVATE_UMASK);
  try {
    await program.parseAsync(argv);
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode !== 0 && !notMistakes.has(error.code)) {
      const name = commandNamed(argv.slice(2))?.name;
      const command = program.commands.find((c) => c.name() === name) ?? program;
      process.stderr.write(`usage: ${command === program ? "adxkit" : `adxkit ${name}`} ${command.usage()}  (--help for more)\n`);
    }
    return exitCodeFor(error);
  }
}
