/** Config target: the options table of `adxkit serve` (spec/schemas/serve-options.yaml), which the CLI builds its flags from. */
import type { Model } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";

export function emitConfig(model: Model, render: Render): GeneratedFile[] {
  if (model.serveOptions === undefined) return [];
  return [{ path: "config/index.ts", contents: render("config/index", { serveOptions: model.serveOptions }) }];
}
