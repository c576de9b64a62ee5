/**
 * A load generator's connection for large answers it does not keep: one keep-alive HTTP/1.1
 * connection, one request at a time, each answer read into one reused buffer (net's `onread`),
 * keeping only its status, its first bytes and its length. Hand-written because the bench's client
 * shares a 2-core machine with the server it measures: reading a 4 MB answer cost the client
 * process 4.6–9.0 ms of CPU through undici (its parser copies each chunk into its WebAssembly
 * memory, then into a new Buffer, then through a stream) and 8.5–12.9 ms through node:http, against
 * 2.2–3.3 ms here, most of it the kernel's copy (150 answers in a row, 2026-11-27 14:10, load 3–4;
 * docs/benchmarks.md, "What the cheap request's p99 is made of").
 */
import { connect, type Socket } from "node:net";

/** What is kept of an answer. */
export interface LargeAnswer {
  status: number;
  /** Its body's first bytes (up to 200), as latin1 text. */
  head: string;
  /** Its body's length in bytes. */
  bytes: number;
}

/** How many of a body's first bytes are kept. */
const HEAD_BYTES = 200;

/** A connection to `base` (http://host:port) reading answers into one reused 1 MiB buffer. */
export async function largeAnswers(base: string): Promise<{ post: (path: string, headers: Record<string, string>, body: string) => Promise<LargeAnswer>; close: () => void }> {
  const url = new URL(base);
  let pending: { resolve: (answer: LargeAnswer) => void; reject: (error: Error) => void } | undefined;
  // The answer being read: its head's text until the blank line, then the body's bytes left.
  let headText = "";
  let status = 0;
  let left = -1;
  let length = 0;
  let first = "";
  const fail = (error: Error) => {
    const waiting = pending;
    pending = undefined;
    waiting?.reject(error);
  };
  const read = (n: number, buffer: Uint8Array): boolean => {
    const chunk = Buffer.from(buffer.buffer, buffer.byteOffset, n);
    let at = 0;
    while (at < n) {
      if (left < 0) {
        const text = chunk.toString("latin1", at, Math.min(n, at + 4096));
        const end = (headText + text).indexOf("\r\n\r\n");
        if (end < 0) {
          headText += text;
          at += text.length;
          continue;
        }
        const used = end + 4 - headText.length;
        headText += text.slice(0, used);
        at += used;
        status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headText)?.[1] ?? 0);
        const declared = /\r\ncontent-length: *(\d+)/i.exec(headText);
        if (declared === null) {
          socket.destroy();
          fail(new Error(`an answer without content-length: ${headText.slice(0, 200)}`));
          return false;
        }
        left = length = Number(declared[1]);
        first = "";
      }
      const take = Math.min(left, n - at);
      if (first.length < HEAD_BYTES) first += chunk.toString("latin1", at, at + Math.min(take, HEAD_BYTES - first.length));
      left -= take;
      at += take;
      if (left === 0) {
        const answer = { status, head: first, bytes: length };
        headText = "";
        left = -1;
        const waiting = pending;
        pending = undefined;
        waiting?.resolve(answer);
      }
    }
    return true;
  };
  const socket: Socket = connect({ host: url.hostname, port: Number(url.port), onread: { buffer: Buffer.alloc(1 << 20), callback: read } });
  socket.on("error", (error) => fail(error));
  socket.on("close", () => fail(new Error("the connection closed before the answer ended")));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return {
    post: (path, headers, body) =>
      new Promise<LargeAnswer>((resolve, reject) => {
        if (pending !== undefined) return reject(new Error("one request at a time"));
        pending = { resolve, reject };
        const lines = Object.entries({ host: url.host, ...headers, "content-length": String(Buffer.byteLength(body)) }).map(([name, value]) => `${name}: ${value}\r\n`);
        socket.write(`POST ${path} HTTP/1.1\r\n${lines.join("")}\r\n${body}`);
      }),
    close: () => socket.destroy(),
  };
}
