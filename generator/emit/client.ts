/** Client target: a typed client for each report interface (operations secured by x-userid / x-authorization). */
import type { Model } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";
import { pascal } from "../names.js";


export function emitClient(model: Model, render: Render): GeneratedFile[] {
  const typeOfKind = new Map(model.validators.map((v) => [v.kind, v.typeName]));
  const clients = model.apis
    .map((api) => ({
      id: api.id,
      title: api.title,
      factory: `create${pascal(api.id)}Client`,
      clientType: `${pascal(api.id)}Client`,
      responseType: `${pascal(api.id)}Response`,
      operations: api.operations
        .filter((op) => op.credentialsIn !== undefined && op.payloadKind)
        .map((op) => ({ ...op, payloadType: typeOfKind.get(op.payloadKind!), queryParameters: op.parameters.filter((p) => p.in === "query" && !p.name.startsWith("x-")) })),
    }))
    .filter((c) => c.operations.length > 0);
  const types = [...new Set(clients.flatMap((c) => [c.responseType, ...c.operations.map((o) => o.payloadType)]))].sort();
  return [{ path: "client/index.ts", contents: render("client/index", { clients, types }) }];
}
