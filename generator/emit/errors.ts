/** Errors target: the report status table, validation rule kinds, named rules and auction rejection reasons; and the macro table of part 2.7. */
import type { Model } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";
import { pascal } from "../names.js";


export function emitErrors(model: Model, render: Render): GeneratedFile[] {
  const view = {
    errors: model.errors,
    statusNames: model.errors.reportStatus.map((s) => ({ member: pascal(s.name), code: s.code, msg: s.msg })),
  };
  return [
    { path: "errors/index.ts", contents: render("errors/index", view) },
    { path: "macros/index.ts", contents: render("macros/index", { macros: model.macros, auctionRules: model.auctionRules ?? null, billingTokenFormats: model.billingTokenFormats ?? null }) },
  ];
}
