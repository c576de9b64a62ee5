// What handleOperation sends for each kind of body a handler may return: a list of byte chunks
// (a report's envelope around its rows' bytes) arrives as their concatenation, with its length
// declared, whether it is joined (small) or streamed chunk by chunk (large). `sent` is called once
// the body is out in full, never for an answer the client did not take whole.
import { once } from "node:events";
import { connect } from "node:net";
import type { ServerResponse } from "node:http";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleOperation, type OperationOutput } from "../../runtime/fastify.js";

const bytes = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) % 251);
const outputs: Record<string, OperationOutput> = {
  small: { status: 200, body: [bytes(10, 1), bytes(0, 2), bytes(300, 3)], headers: { "content-type": "application/json; charset=utf-8" } },
  large: { status: 200, body: [Buffer.from('{"rows":'), bytes(3 * 1024 * 1024 + 7, 4), Buffer.from("}")], headers: { "content-type": "application/json; charset=utf-8" } },
  bytes: { status: 200, body: bytes(1000, 5) },
  empty: { status: 200, body: [] },
  // More than loopback's socket buffers take at once, so a client that reads nothing holds most of it back.
  huge: { status: 200, body: [Buffer.from("["), Buffer.alloc(64 * 1024 * 1024, 0x20), Buffer.from("]")] },
};
/** The `sent` calls and responses of the routes below, by kind. */
const sentCalls: Record<string, number> = {};
const responses: Record<string, ServerResponse> = {};
const closed: Record<string, Promise<unknown>> = {};
const withSent = (kind: string, output: OperationOutput): OperationOutput => ({ ...output, sent: () => (sentCalls[kind] = (sentCalls[kind] ?? 0) + 1) });

describe("handleOperation's bodies", () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = Fastify();
    app.get("/:kind", (request, reply) =>
      handleOperation(request, reply, { operationId: "op", payload: "none", parameters: [] }, undefined, {}, async () => outputs[(request.params as { kind: string }).kind]),
    );
    app.get("/sent/:kind", (request, reply) => {
      const kind = (request.params as { kind: string }).kind;
      responses[kind] = reply.raw;
      closed[kind] = once(reply.raw, "close");
      return handleOperation(request, reply, { operationId: "op", payload: "none", parameters: [] }, undefined, {}, async () => withSent(kind, outputs[kind.replace(/-.*/, "")]));
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(() => app.close());

  it.each(["small", "large"])("a %s list of chunks arrives as their concatenation, its length declared", async (kind) => {
    const response = await fetch(`${base}/${kind}`);
    const chunks = outputs[kind].body as Uint8Array[];
    const expected = Buffer.concat(chunks);
    expect(response.headers.get("content-length")).toBe(String(expected.length));
    expect(response.headers.get("transfer-encoding")).toBeNull();
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(Buffer.from(await response.arrayBuffer()).equals(expected)).toBe(true);
  });

  it("bytes go out as they are; an empty list is an empty JSON array, not an empty body", async () => {
    const raw = await fetch(`${base}/bytes`);
    expect(raw.headers.get("content-type")).toBe("application/octet-stream");
    expect(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(outputs.bytes.body as Uint8Array))).toBe(true);
    expect(await (await fetch(`${base}/empty`)).text()).toBe("[]");
  });

  it.each(["small", "large", "bytes"])("calls sent once a %s body has gone out in full", async (kind) => {
    const response = await fetch(`${base}/sent/${kind}`);
    await response.arrayBuffer();
    if (!responses[kind].writableFinished) await once(responses[kind], "finish");
    expect(sentCalls[kind]).toBe(1);
  });

  it("never calls sent when the client goes away before the body is out", async () => {
    // A raw client that asks for 64 MB, reads nothing and leaves: the rest of the body is never written.
    const socket = connect((app.server.address() as { port: number }).port, "127.0.0.1");
    await once(socket, "connect");
    socket.pause();
    socket.write("GET /sent/huge HTTP/1.1\r\nhost: x\r\n\r\n");
    while (closed.huge === undefined) await new Promise((resolve) => setImmediate(resolve));
    socket.destroy();
    await closed.huge;
    expect(responses.huge.writableFinished).toBe(false);
    expect(sentCalls.huge).toBeUndefined();
  });
});
