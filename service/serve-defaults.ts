/** The defaults of `adxkit serve`'s options, read from the generated options table (spec/schemas/serve-options.yaml). */
import { serveOptions } from "@adxkit/bindings";

/** The default of a numeric serve option. */
export const serveDefault = (name: string): number => serveOptions.find((option) => option.name === name)!.default as number;

/** The default of a boolean serve option. */
export const serveSwitchDefault = (name: string): boolean => serveOptions.find((option) => option.name === name)!.default === true;
