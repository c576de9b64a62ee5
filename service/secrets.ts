/**
 * Secrets come from the environment, never from a command line (a process list shows those):
 * a variable, or the file its `_FILE` variable names (as container platforms mount secrets).
 */
import { readFileSync } from "node:fs";

/** The value of the secret variable `name`, or of the file `${name}_FILE` names (one trailing newline dropped); undefined when neither is set. */
export function readSecret(name: string, env: NodeJS.ProcessEnv = process.env): { value: string; origin: string } | undefined {
  if (env[name] !== undefined) return { value: env[name]!, origin: name };
  const file = env[`${name}_FILE`];
  if (file === undefined) return undefined;
  try {
    return { value: readFileSync(file, "utf8").replace(/\r?\n$/, ""), origin: `${name}_FILE` };
  } catch (error) {
    throw new Error(`${name}_FILE names ${file}, which cannot be read: ${(error as Error).message}`);
  }
}
