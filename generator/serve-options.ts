/** The options of `adxkit serve` in the model, read from spec/schemas/serve-options.yaml. */
import type { SchemaModel } from "./model.js";

/**
 * One option of `adxkit serve` (spec/schemas/serve-options.yaml): where it comes from and what
 * it takes. The CLI builds its flags, environment variables, defaults and --print-config from
 * these; the generated validateServeOptions checks the values.
 */
export interface ServeOptionModel {
  /** The property of ServeOptions. */
  name: string;
  /** The flag with its argument, e.g. "--port <port>"; absent for a secret. */
  flag?: string;
  /** Environment variables, the first one set wins. */
  env: string[];
  /** A secret: never on the command line, redacted when printed; also read from the file `${env}_FILE` names. */
  secret: boolean;
  /** The JSON Schema type(s) of the value. */
  type: string[];
  /** The choices of an enum, if any. */
  choices?: string[];
  default?: string | number | boolean;
  description: string;
}

/** The options table of spec/schemas/serve-options.yaml; every option needs a flag or, for a secret, a variable. */
export function serveOptionsOf(schema: SchemaModel | undefined, problems: string[]): ServeOptionModel[] | undefined {
  if (schema === undefined) return undefined;
  return Object.entries<any>(schema.schema.properties ?? {}).map(([name, node]): ServeOptionModel => {
    const secret = node["x-adxkit-secret"] === true;
    const env: unknown = node["x-adxkit-env"] ?? [];
    if (!Array.isArray(env) || !env.every((e) => typeof e === "string" && /^[A-Z][A-Z0-9_]*$/.test(e))) problems.push(`${schema.specPath}: ${name}: x-adxkit-env must list variable names`);
    if (secret ? node["x-adxkit-flag"] !== undefined || (env as string[]).length === 0 : typeof node["x-adxkit-flag"] !== "string") {
      problems.push(`${schema.specPath}: ${name}: ${secret ? "a secret has variables (x-adxkit-env) and no flag" : "needs x-adxkit-flag"}`);
    }
    return {
      name,
      ...(secret ? {} : { flag: node["x-adxkit-flag"] }),
      env: env as string[],
      secret,
      type: [node.type].flat(),
      ...(node.enum ? { choices: node.enum.map(String) } : {}),
      ...(node.default !== undefined ? { default: node.default } : {}),
      description: String(node.description ?? "").trim(),
    };
  });
}
