/**
 * Attacks (issue 16, item 8): holding the server with slow or idle connections. Before, a body
 * trickled at one byte a second was held 77 s against the documented 30 s (Node looks for late
 * requests only every 30 s), headers had Node's 60 s, and connections had no cap. Now
 * requestTimeoutMs, headersTimeoutMs and maxConnections are serve options (spec
 * serve-options.yaml), checked every second; the tests set them small and stay well inside their
 * bounds (a late answer fails the count, never a timing).
 */
import { connect, type Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { serveOptions } from "@adxkit/bindings";
import { buildApp, serverLimits } from "../../service/app.js";
import { openStore, type ReportStore } from "../../service/store/index.js";

let store: ReportStore | undefined;
let app: FastifyInstance | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await app?.close();
  await store?.close();
  app = store = undefined;
});

/** The server with these client limits on 127.0.0.1:0; its port. */
async function serve(clientLimits: Parameters<typeof buildApp>[0]["clientLimits"]): Promise<number> {
  store = await openStore({ db: ":memory:" });
  app = await buildApp({ store, clientLimits });
  await app.listen({ host: "127.0.0.1", port: 0 });
  return (app.server.address() as { port: number }).port;
}

/** A raw connection; resolves once connected. Everything it receives is kept; `closed` settles when the server ends it. */
function open(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((done, fail) => {
    const socket = connect({ host: "127.0.0.1", port });
    sockets.push(socket);
    let text = "";
    const closed = new Promise<void>((ended) => socket.once("close", () => ended()));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (text += chunk));
    socket.once("error", () => undefined);
    socket.once("connect", () => done({ socket, received: () => text, closed }));
    socket.once("error", fail);
  });
}

/** Writes one byte every `everyMs` until the socket closes or `max` bytes were sent; the number sent. */
async function trickle(socket: Socket, closed: Promise<void>, everyMs: number, max: number): Promise<number> {
  let sent = 0;
  let over = false;
  void closed.then(() => (over = true));
  while (!over && sent < max) {
    await new Promise((r) => setTimeout(r, everyMs));
    if (!over && socket.writable) {
      socket.write("a");
      sent++;
    }
  }
  return sent;
}

/** Waits (at most 20 s) until the server's open connections satisfy `done`. */
async function connectionsReach(done: (n: number) => boolean): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 20) {
    const n = await new Promise<number>((r) => app!.server.getConnections((_e, count) => r(count)));
    if (done(n)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the server's connections did not reach the expected count within 20 s");
}

describe("slow clients and idle connections", () => {
  it("the limits are serve options, their defaults in the spec", () => {
    const defaults = Object.fromEntries(serveOptions.map((o) => [o.name, o.default]));
    expect(serverLimits).toMatchObject({ requestTimeoutMs: defaults.requestTimeoutMs, headersTimeoutMs: defaults.headersTimeoutMs, maxConnections: defaults.maxConnections });
    expect(serverLimits.headersTimeoutMs).toBeLessThanOrEqual(serverLimits.requestTimeoutMs);
  });

  it("a body trickled one byte every 100 ms gets 408 and its connection closed at requestTimeoutMs, not when the trickle ends", async () => {
    const port = await serve({ requestTimeoutMs: 1000, headersTimeoutMs: 1000 });
    const { socket, received, closed } = await open(port);
    socket.write("POST /api/report/v1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n");
    // 10,000 bytes at 10 a second would take 1,000 s; the server's limit is 1 s, checked every second.
    const sent = await trickle(socket, closed, 100, 10_000);
    expect(received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(sent).toBeLessThan(300);
  });

  it("headers trickled one byte every 100 ms get 408 at headersTimeoutMs", async () => {
    const port = await serve({ requestTimeoutMs: 5000, headersTimeoutMs: 1000 });
    const { socket, received, closed } = await open(port);
    socket.write("GET /health HTTP/1.1\r\nX-Slow: ");
    const sent = await trickle(socket, closed, 100, 10_000);
    expect(received()).toMatch(/^HTTP\/1\.1 408 /);
    // Well before requestTimeoutMs (5 s, 50 bytes) would have ended it.
    expect(sent).toBeLessThan(45);
  });

  it("connections over maxConnections are closed at once; the server still answers once they go", async () => {
    const cap = 8;
    const port = await serve({ maxConnections: cap });
    const held = [];
    for (let i = 0; i < cap; i++) held.push(await open(port));
    // The held connections are idle; wait (bounded) until the server has accepted them all.
    await connectionsReach((n) => n === cap);
    const extra = await Promise.all(Array.from({ length: 12 }, () => open(port)));
    await Promise.all(extra.map((connection) => connection.closed));
    for (const connection of extra) expect(connection.received()).toBe("");
    for (const connection of held) connection.socket.destroy();
    await connectionsReach((n) => n === 0);
    const { socket, received, closed } = await open(port);
    socket.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 \d{3} /);
  });
});
