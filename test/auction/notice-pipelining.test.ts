/**
 * Notices on the wire (service/auction/http-client.ts sendNotices, notices.ts batches): the
 * notices of one batch travel pipelined on a few keep-alive connections, and a server that does
 * not keep connections open, or answers slowly, still gets every notice exactly once.
 */
import { createServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { HttpClient } from "../../service/auction/http-client.js";
import { NoticeSender } from "../../service/auction/notices.js";
import { gate } from "./helpers.js";

const silent = { info() {}, warn() {}, error() {} };

/** A notice endpoint on loopback that counts connections, reads and requests by URL. */
async function noticeServer(answer: (res: import("node:http").ServerResponse) => void = (res) => res.writeHead(204).end()) {
  const seen = { connections: 0, reads: 0, requests: 0, urls: new Map<string, number>() };
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    seen.requests++;
    seen.urls.set(req.url!, (seen.urls.get(req.url!) ?? 0) + 1);
    answer(res);
  });
  server.on("connection", (socket: Socket) => {
    seen.connections++;
    sockets.add(socket);
    socket.on("data", () => seen.reads++);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { base, seen, close };
}

/** Waits for what must happen; the bound is generous, so a loaded machine only makes it slower. */
const until = async (condition: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
};

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.map((close) => close()));
  cleanup = [];
});

function sender(options: { connections: number; pipelining: number; batchMs: number }) {
  const http = new HttpClient({ noticeConnections: options.connections, noticePipelining: options.pipelining });
  const notices = new NoticeSender(http, silent, { ...options, attempts: 3, baseDelayMs: 10, timeoutMs: 2000 });
  cleanup.push(async () => {
    await notices.close(1000);
    await http.close(100);
  });
  return notices;
}

describe("notices on the wire", () => {
  test("a batch travels pipelined on at most `connections` connections, several notices per read", async () => {
    const server = await noticeServer();
    cleanup.push(server.close);
    const notices = sender({ connections: 2, pipelining: 16, batchMs: 20 });
    notices.send("win", `${server.base}/win?warm`, {}); // its answer keeps the connection open: the origin is pipelined to from now on
    await until(() => notices.pending === 0);
    notices.send("win", `${server.base}/win?open`, {}); // opens a pipelined connection; the batch below finds it idle
    await until(() => notices.pending === 0);
    const before = { reads: server.seen.reads, requests: server.seen.requests, connections: server.seen.connections };
    for (let i = 0; i < 30; i++) notices.send("win", `${server.base}/win?n=${i}`, {});
    await until(() => notices.pending === 0);
    expect(server.seen.requests - before.requests).toBe(30);
    expect([...server.seen.urls.values()].every((n) => n === 1)).toBe(true);
    expect(server.seen.connections - before.connections).toBeLessThanOrEqual(1); // the second of the 2 allowed
    // One notice per read would be 30 reads; corked and pipelined, a connection's share arrives in one write.
    expect(server.seen.reads - before.reads).toBeLessThan(10);
    expect(notices.stats().win).toMatchObject({ sent: 32, delivered: 32, failed: 0 });
  });

  test("a server that closes the connection after each answer still gets every notice exactly once", async () => {
    const server = await noticeServer((res) => res.writeHead(204, { connection: "close" }).end());
    cleanup.push(server.close);
    const notices = sender({ connections: 2, pipelining: 16, batchMs: 10 });
    for (let i = 0; i < 20; i++) notices.send("billing", `${server.base}/bill?n=${i}`, {});
    await until(() => notices.pending === 0);
    expect(notices.stats().billing).toMatchObject({ sent: 20, delivered: 20, failed: 0 });
    expect(server.seen.urls.size).toBe(20);
    expect([...server.seen.urls.values()].every((n) => n === 1)).toBe(true);
  });

  test("an HTTP/1.0 server that closes after each answer without saying so gets every notice exactly once", async () => {
    // HTTP/1.0 without `Connection: keep-alive` closes by default: undici sees it (the answer is
    // not keep-alive), sends the notices pipelined behind again on new connections, and such a
    // server reads one request per connection, so none is acted on twice.
    const acted = new Map<string, number>();
    let connections = 0;
    let mostRequestsOnOneConnection = 0;
    const server = createNetServer((socket) => {
      connections++;
      let head = "";
      let received = "";
      socket.on("error", () => {});
      socket.on("data", (chunk) => {
        received += chunk.toString("latin1");
        mostRequestsOnOneConnection = Math.max(mostRequestsOnOneConnection, received.split("GET ").length - 1);
        if (head === "done") return;
        head += chunk.toString("latin1");
        if (!head.includes("\r\n\r\n")) return;
        const path = head.split(" ")[1];
        acted.set(path, (acted.get(path) ?? 0) + 1);
        head = "done";
        socket.end("HTTP/1.0 204 No Content\r\n\r\n");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const notices = sender({ connections: 2, pipelining: 16, batchMs: 10 });
    notices.send("win", `${base}/win?first`, {}); // learnt as keeping connections open: no close header
    await until(() => notices.pending === 0);
    for (let i = 0; i < 40; i++) notices.send("win", `${base}/win?n=${i}`, {});
    await until(() => notices.pending === 0);
    expect(notices.stats().win).toMatchObject({ sent: 41, delivered: 41, failed: 0 });
    expect(acted.size).toBe(41);
    expect([...acted.values()].every((n) => n === 1)).toBe(true);
    expect(connections).toBe(41);
    expect(mostRequestsOnOneConnection).toBeGreaterThan(1); // the risky case happened: notices were pipelined to it
  });

  test("an origin that once answered Connection: close is not pipelined to again", async () => {
    let close = false;
    const server = await noticeServer((res) => res.writeHead(204, close ? { connection: "close" } : {}).end());
    cleanup.push(server.close);
    const notices = sender({ connections: 2, pipelining: 16, batchMs: 10 });
    notices.send("win", `${server.base}/win?keep`, {});
    await until(() => notices.pending === 0);
    close = true;
    notices.send("win", `${server.base}/win?close`, {});
    await until(() => notices.pending === 0);
    close = false; // keeps connections open again: the origin stays off pipelining all the same
    const before = { reads: server.seen.reads, requests: server.seen.requests };
    for (let i = 0; i < 10; i++) notices.send("win", `${server.base}/win?n=${i}`, {});
    await until(() => notices.pending === 0);
    expect(server.seen.requests - before.requests).toBe(10);
    expect(server.seen.reads - before.reads).toBe(10); // one request per write: none pipelined
    expect(notices.stats().win).toMatchObject({ sent: 12, delivered: 12, failed: 0 });
  });

  test("notices to an origin not pipelined to are not held to the pipelined connections' limit", async () => {
    // No answer leaves until three notices are in flight at once, more than the 2 connections
    // of pipelined origins: held to that limit, the notices would time out instead.
    let inFlight = 0;
    let most = 0;
    const three = gate();
    const server = await noticeServer((res) => {
      most = Math.max(most, ++inFlight);
      if (inFlight >= 3) three.open();
      void three.promise.then(() => res.writeHead(204, { connection: "close" }).end(() => inFlight--));
    });
    cleanup.push(server.close);
    const notices = sender({ connections: 2, pipelining: 16, batchMs: 5 });
    for (let i = 0; i < 12; i++) notices.send("win", `${server.base}/win?n=${i}`, {});
    await until(() => notices.pending === 0);
    expect(notices.stats().win).toMatchObject({ delivered: 12, failed: 0, retried: 0 });
    expect(most).toBeGreaterThan(2);
  });

  test("a slow notice endpoint holds up only the notices to its own origin", async () => {
    // The slow origin answers nothing until the quick one has had its notice: were the quick
    // notice queued behind the slow ones, it would never arrive.
    let slowAnswered = 0;
    let slowAnsweredBeforeQuick: number | undefined;
    const quickArrived = gate();
    const slow = await noticeServer((res) => void quickArrived.promise.then(() => res.writeHead(204).end(() => slowAnswered++)));
    const quick = await noticeServer((res) => {
      slowAnsweredBeforeQuick = slowAnswered;
      quickArrived.open();
      res.writeHead(204).end();
    });
    cleanup.push(slow.close, quick.close);
    const notices = sender({ connections: 1, pipelining: 4, batchMs: 5 });
    for (let i = 0; i < 4; i++) notices.send("win", `${slow.base}/win?n=${i}`, {});
    notices.send("win", `${quick.base}/win`, {});
    await until(() => quick.seen.requests === 1);
    expect(slowAnsweredBeforeQuick).toBe(0);
    await until(() => notices.pending === 0);
    expect(notices.stats().win).toMatchObject({ delivered: 5, failed: 0 });
  });

  test("a pipelined origin that stops listening fails its notices, and nothing else", async () => {
    const server = await noticeServer();
    const notices = sender({ connections: 2, pipelining: 16, batchMs: 5 });
    notices.send("win", `${server.base}/win?up`, {}); // kept open: pipelined to from now on
    await until(() => notices.pending === 0);
    await server.close();
    notices.send("win", `${server.base}/win?down`, {}); // connection refused, three times
    await until(() => notices.pending === 0);
    expect(notices.stats().win).toMatchObject({ sent: 2, delivered: 1, retried: 2, failed: 1 });
  });
});
