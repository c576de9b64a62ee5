/** Code lists target: one module per list (typed members + lookups) and an index of all lists. */
import type { Model } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";

export function emitCodelists(model: Model, render: Render): GeneratedFile[] {
  const files = model.codelists.map((list) => ({
    path: `codelists/${list.id}.ts`,
    contents: render("codelists/list", {
      list,
      codeType: list.values.map((v) => JSON.stringify(v.code)).join(" | "),
      valueType: list.type === "integer" ? "number" : "string",
      isIab: list.id === "iab-category",
    }),
  }));
  files.push({ path: "codelists/index.ts", contents: render("codelists/index", { lists: model.codelists, hasIab: model.codelists.some((l) => l.id === "iab-category") }) });
  return files;
}
