/**
 * The options of `adxkit serve`, from the spec (spec/schemas/serve-options.yaml, generated
 * `serveOptions` and `validateServeOptions`): each from its flag, else its first environment
 * variable set, else its default; secrets from their variable or the file `${VARIABLE}_FILE`
 * names, never from a flag. The values are checked by the generated validator, so a bad one gets
 * the same message as any payload, with the flag and where the value came from.
 */
import { Option, type Command } from "commander";
import { serveOptions, validateServeOptions, type ServeOption, type ServeOptions } from "@adxkit/bindings";
import { readSecret } from "../secrets.js";
import { UsageError } from "./errors.js";

/** Where an option's value came from: its flag, a variable (or the file a _FILE variable names), or the spec's default. */
export type OptionOrigin = string;

/** The effective options and, for each one set, where it came from. */
export interface ResolvedServeOptions {
  values: ServeOptions;
  origins: Partial<Record<keyof ServeOptions, OptionOrigin>>;
}

const byName = new Map(serveOptions.map((o) => [o.name, o]));
const flagName = (o: ServeOption) => o.flag?.split(" ")[0];

/**
 * A text (a flag's argument or a variable) as the value the option's schema type takes; text that
 * is no such value stays text, and the validator says what is wrong with it.
 */
function typed(option: ServeOption, text: unknown): unknown {
  if (typeof text !== "string") return text;
  const types = option.type;
  if ((types.includes("integer") || types.includes("number")) && /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(text)) return Number(text);
  if (types.includes("boolean")) {
    if (/^(true|1|yes|on)$/i.test(text)) return true;
    if (/^(false|0|no|off)$/i.test(text)) return false;
  }
  return text;
}

/** The flag of one option (`--spool <dir>` also gets `--no-spool`); `variables: false` leaves its variables out of the help. */
function addFlag(command: Command, option: ServeOption, variables = true): void {
  if (option.flag === undefined) return;
  const notes = [variables && option.env.length > 0 ? `env ${option.env.join(", ")}` : "", option.default !== undefined ? `default ${option.default}` : ""].filter(Boolean);
  // The spec's description is sentences: the notes follow as one more, in parentheses.
  command.addOption(new Option(option.flag, notes.length > 0 ? `${option.description} (${notes.join("; ")})` : option.description));
  if (option.type.includes("boolean") && option.type.includes("string")) {
    command.addOption(new Option(`--no-${flagName(option)!.slice(2)}`, `no ${option.name} at all (or ${option.env[0]}=false)`));
  }
}

/** Adds the flag of every option that has one, and --print-config. */
export function addServeOptions(command: Command): Command {
  for (const option of serveOptions) addFlag(command, option);
  return command.addOption(new Option("--print-config", "print the effective options, where each came from (flag, variable, default), secrets redacted; then exit"));
}

/**
 * Adds the flags of some serve options to another command (the store commands share the store's):
 * the same flag, description and check; only the flags (the variables are serve's).
 */
export function addServeFlags(command: Command, names: readonly (keyof ServeOptions)[]): Command {
  for (const name of names) addFlag(command, byName.get(name)!, false);
  return command;
}

/**
 * The values of some serve options given as flags of another command (commander's parsed text),
 * checked by the spec's validator; throws a UsageError naming the flag, like serve's.
 */
export function checkServeFlags<K extends keyof ServeOptions>(given: Partial<Record<K, unknown>>, usage: string): Pick<ServeOptions, K> {
  const values: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const [name, text] of Object.entries(given)) {
    if (text === undefined) continue;
    values[name] = typed(byName.get(name)!, text);
    origins[name] = flagName(byName.get(name)!) ?? name;
  }
  return checked(values, origins, usage) as Pick<ServeOptions, K>;
}

/** The values when the generated validator takes them; else a UsageError naming each flag (or variable), its origin and the problem. */
function checked(values: Record<string, unknown>, origins: Record<string, string>, usage: string): ServeOptions {
  const result = validateServeOptions(values);
  if (result.valid) return values as ServeOptions;
  const problems = result.errors.map((issue) => {
    const name = issue.path.split("/")[1] ?? "";
    const option = byName.get(name);
    const label = option?.flag !== undefined ? flagName(option) : (option?.env[0] ?? name);
    const origin = origins[name] !== undefined && origins[name] !== label ? ` (from ${origins[name]})` : "";
    // The validator's message names the value: never shown for a secret.
    const message = option?.secret ? `not a valid value (rule ${issue.rule})` : issue.message;
    return `${label}${origin}: ${message}`;
  });
  throw new UsageError(`${problems.join("; ")} — ${usage}`);
}

/**
 * The effective options: flags (what commander parsed, `cli` in its value sources) win over
 * variables, variables over defaults. Throws a UsageError naming the flag (or variable), the
 * value's origin and the validator's message when a value does not fit the schema.
 */
export function resolveServeOptions(command: Command, env: NodeJS.ProcessEnv = process.env): ResolvedServeOptions {
  const parsed = command.opts() as Record<string, unknown>;
  const values: Record<string, unknown> = {};
  const origins: Record<string, string> = {};
  for (const option of serveOptions) {
    const flag = flagName(option);
    if (flag !== undefined && command.getOptionValueSource(option.name) === "cli") {
      values[option.name] = typed(option, parsed[option.name]);
      origins[option.name] = parsed[option.name] === false ? `--no-${flag.slice(2)}` : flag;
      continue;
    }
    const variable = option.secret ? option.env.map((name) => readSecret(name, env)).find(Boolean) : option.env.filter((name) => env[name] !== undefined).map((name) => ({ value: env[name]!, origin: name }))[0];
    if (variable !== undefined) {
      values[option.name] = typed(option, variable.value);
      origins[option.name] = variable.origin;
    } else if (option.default !== undefined) {
      values[option.name] = option.default;
      origins[option.name] = "default";
    }
  }
  return { values: checked(values, origins, "usage: adxkit serve [options], see adxkit serve --help"), origins };
}

/** The effective options as --print-config prints them: each value (secrets and URL passwords redacted) and its origin. */
export function printableConfig({ values, origins }: ResolvedServeOptions): Record<string, { value: unknown; from: string }> {
  const printed: Record<string, { value: unknown; from: string }> = {};
  for (const option of serveOptions) {
    const name = option.name as keyof ServeOptions;
    if (values[name] === undefined) continue;
    let value: unknown = option.secret ? "[redacted]" : values[name];
    if (typeof value === "string" && /^https?:\/\//.test(value)) value = redactUrlPassword(value);
    printed[name] = { value, from: origins[name] ?? "default" };
  }
  return printed;
}

/** A URL with its password, if any, written [redacted]. */
export function redactUrlPassword(text: string): string {
  try {
    const url = new URL(text);
    if (url.password === "") return text;
    url.password = "redacted";
    return url.href.replace(":redacted@", ":[redacted]@");
  } catch {
    return text;
  }
}
