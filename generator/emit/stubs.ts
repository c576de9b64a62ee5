/** Stubs target: one Fastify plugin per operation tag, calling a typed handler interface. */
import type { Model } from "../model.js";
import type { Render } from "../templates.js";
import type { GeneratedFile } from "../write.js";
import { camel, pascal } from "../names.js";


export function emitStubs(model: Model, render: Render): GeneratedFile[] {
  const typeOfKind = new Map(model.validators.map((v) => [v.kind, v.typeName]));
  const plugins = new Map<string, { tag: string; api: string; operations: any[] }>();
  for (const api of model.apis) {
    for (const op of api.operations) {
      const plugin = plugins.get(op.tag) ?? { tag: op.tag, api: api.id, operations: [] };
      plugin.operations.push({
        ...op,
        payloadType: op.payloadKind ? typeOfKind.get(op.payloadKind) : undefined,
        definition: {
          operationId: op.operationId,
          payload: op.payload,
          kind: op.payloadKind,
          parameters: op.parameters.filter((p) => p.in === "query").map(({ name, field, array, integer }) => ({ name, field, array, integer })),
          credentialsIn: op.credentialsIn,
        },
      });
      plugins.set(op.tag, plugin);
    }
  }
  const views = [...plugins.values()].map((p) => ({
    ...p,
    pluginName: `${camel(p.tag)}Plugin`,
    handlersName: `${pascal(p.tag)}Handlers`,
    optionsName: `${pascal(p.tag)}PluginOptions`,
    file: p.tag,
    payloadTypes: [...new Set(p.operations.map((o) => o.payloadType).filter(Boolean))].sort(),
  }));
  const files = views.map((view) => ({ path: `stubs/${view.file}.ts`, contents: render("stubs/plugin", view) }));
  files.push({ path: "stubs/index.ts", contents: render("stubs/index", { plugins: views, secretParameters: model.secretParameters }) });
  return files;
}
