// installJsonParser: which bodies reach the handler parsed, and which as the `json` rule's
// problem, by Content-Type. The parser is registered for application/json and for every other
// type (Fastify caches only the first kind of lookup): both must behave as one.
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleOperation, installJsonParser } from "../../runtime/fastify.js";

describe("installJsonParser", () => {
  let app: FastifyInstance;
  const parsed: string[] = [];
  beforeAll(async () => {
    app = Fastify();
    installJsonParser(app, (text) => {
      parsed.push(text);
      return JSON.parse(text);
    });
    app.post("/", (request, reply) =>
      handleOperation(request, reply, { operationId: "op", payload: "body", parameters: [] }, undefined, {}, async (input) => ({
        status: 200,
        body: input.validation.valid ? { payload: input.payload } : { errors: input.validation.errors },
      })),
    );
    await app.ready();
  });
  afterAll(() => app.close());

  it.each([
    ["application/json", true],
    ["application/json; charset=utf-8", true],
    ["APPLICATION/JSON", true],
    ["application/vnd.example+json", true],
    ["text/plain", false],
    ["application/jsonp", false],
    ["application/x-www-form-urlencoded", false],
  ])("%s: parsed %s", async (type, accepted) => {
    const before = parsed.length;
    const response = await app.inject({ method: "POST", url: "/", headers: { "content-type": type }, payload: '{"a":1}' });
    expect(response.statusCode).toBe(200);
    if (accepted) {
      expect(response.json()).toEqual({ payload: { a: 1 } });
      expect(parsed.length).toBe(before + 1);
    } else {
      expect(response.json()).toEqual({ errors: [{ path: "", rule: "json", message: `Content-Type must be application/json (got ${type})` }] });
      expect(parsed.length).toBe(before);
    }
  });

  it("a body that is not JSON, under either registration, is the json rule's problem", async () => {
    for (const type of ["application/json", "application/vnd.example+json"]) {
      const response = await app.inject({ method: "POST", url: "/", headers: { "content-type": type }, payload: "{nope" });
      expect(response.json().errors[0]).toMatchObject({ path: "", rule: "json", message: expect.stringContaining("body is not valid JSON") });
    }
  });
});
