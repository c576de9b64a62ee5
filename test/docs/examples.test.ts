// Every file of spec/examples/ (shown on the docs site) is valid against the schema of its
// folder, checked by the generated validator of that schema.
import { describe, expect, it } from "vitest";
import { validators } from "@adxkit/bindings";
import { loadSpec } from "../../generator/load.js";
import { buildModel } from "../../generator/model.js";
import { defaultPaths } from "../../generator/paths.js";

const model = buildModel(await loadSpec(defaultPaths().spec));
const examples = model.schemas.flatMap((s) => s.examples.map((e) => ({ schema: s, name: e.name, value: e.value })));

describe("spec/examples", () => {
  it("has examples for the payloads and answers of every interface", () => {
    const folders = new Set(examples.map((e) => e.schema.id));
    for (const id of ["bid-request", "bid-response", "demand-report-request", "demand-report-response", "supply-report-request", "supply-report-response"]) expect(folders.has(id), id).toBe(true);
  });

  it.each(examples.map((e) => [`${e.schema.id}/${e.name}.json`, e] as const))("%s is valid against its schema", (_name, e) => {
    const kind = e.schema.schema["x-validator"] as keyof typeof validators | undefined;
    expect(kind, `${e.schema.id} has no validator (x-validator) to check its examples with`).toBeDefined();
    const result = (validators[kind!] as (payload: unknown) => { errors: unknown[] })(e.value);
    expect(result.errors).toEqual([]);
  });
});
