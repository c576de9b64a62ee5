/** Index target: the package entry point other services import (`import { validateBidRequest } from "adxkit"`). */
import type { Model } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";
import { pascal } from "../names.js";


export function emitIndex(model: Model, render: Render): GeneratedFile[] {
  const apis = model.apis.map((api) => ({ id: api.id, typePrefix: pascal(api.id) }));
  return [
    {
      path: "index.ts",
      contents: render("index/index", { apis, schemaTitles: model.schemas.map((s) => s.title), config: model.serveOptions !== undefined, hasReports: model.reports !== undefined }),
    },
  ];
}
