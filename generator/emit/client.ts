/** Client target: a typed client for each report interface (operations secured by x-userid / x-authorization). */
import type { Model, OperationModel } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";
import { pascal } from "../names.js";

/** One generated report client: its factory and the operations it has a method for (named by operationId). */
export interface ReportClientModel {
  id: string;
  title: string;
  factory: string;
  clientType: string;
  responseType: string;
  operations: (OperationModel & { payloadType: string | undefined; queryParameters: OperationModel["parameters"] })[];
}

/** The report clients the model gives: one per interface whose operations are secured and take a payload. */
export function reportClients(model: Model): ReportClientModel[] {
  const typeOfKind = new Map(model.validators.map((v) => [v.kind, v.typeName]));
  return model.apis
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
}

export function emitClient(model: Model, render: Render): GeneratedFile[] {
  const clients = reportClients(model);
  const types = [...new Set(clients.flatMap((c) => [c.responseType, ...c.operations.map((o) => o.payloadType)]))].sort();
  return [{ path: "client/index.ts", contents: render("client/index", { clients, types }) }];
}
