/**
 * The bench scripts' command line, one way for all of them: `--help` (or `-h`) prints the script's
 * usage and exits 0; an unknown option, a stray argument or a bad value (in an option or in one of
 * the environment variables a script reads) prints what is wrong and the usage on stderr and exits
 * 2, before the script starts any work. A bench runs for minutes: a typo must not cost a run.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;
type Values<O extends Options> = ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>>["values"];

export interface BenchCommand<O extends Options> {
  /** The options given (parseArgs' values: strings and booleans as declared). */
  readonly values: Values<O>;
  /** Prints `message` and the usage on stderr, and exits 2. */
  fail(message: string): never;
  /** An option's value or an environment variable as an integer ≥ `min`, else `fallback` where unset; anything else fails. */
  integer(name: string, fallback: number, min?: number): number;
  /** A number ≥ `min` (decimals allowed), else `fallback` where unset; anything else fails. */
  number(name: string, fallback: number, min?: number): number;
  /** A comma-separated list each of whose items is one of `allowed`, else `fallback` where unset. */
  list<T extends string>(name: string, fallback: readonly T[], allowed: readonly T[]): T[];
}

/**
 * Reads the command line (`args`, default the process's) against `options`. Names given to
 * `integer`, `number` and `list` that start with `--` are options; others are environment variables.
 */
export function benchCommand<const O extends Options>(usage: string, options: O = {} as O, args: string[] = process.argv.slice(2)): BenchCommand<O> {
  const fail = (message: string): never => {
    process.stderr.write(`${message}\n\n${usage}\n`);
    process.exit(2);
  };
  let values: Values<O> & { help?: boolean };
  try {
    values = parseArgs({ args, options: { ...options, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false }).values as Values<O> & { help?: boolean };
  } catch (error) {
    return fail((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const raw = (name: string): string | undefined => {
    const given = name.startsWith("--") ? (values as Record<string, unknown>)[name.slice(2)] : process.env[name];
    return typeof given === "string" && given !== "" ? given : undefined;
  };
  const numeric = (name: string, fallback: number, min: number, integer: boolean): number => {
    const text = raw(name);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
      return fail(`${name} must be ${integer ? "an integer" : "a number"} ≥ ${min} (got "${text}")`);
    }
    return value;
  };
  return {
    values,
    fail,
    integer: (name, fallback, min = 0) => numeric(name, fallback, min, true),
    number: (name, fallback, min = 0) => numeric(name, fallback, min, false),
    list(name, fallback, allowed) {
      const text = raw(name);
      if (text === undefined) return [...fallback];
      const items = text.split(",") as typeof allowed[number][];
      const unknown = items.find((item) => !allowed.includes(item));
      if (unknown !== undefined) return fail(`${name}: "${unknown}" is not one of ${allowed.join(", ")}`);
      return items;
    },
  };
}
