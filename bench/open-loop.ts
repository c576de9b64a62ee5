/**
 * The overload row's load generator (bench/auction.ts runs it in a process of its own, so that
 * its event loop is not the autocannon's or the parent's). Open loop: requests leave on schedule
 * whatever the answers, one at a time per keep-alive connection (a shed answer must not wait
 * behind an auction on its connection), on up to `connections`, opened ahead of the clock.
 * It sorts the answers: after `lateAfterMs` from when the request was due is late (a caller
 * throws it away); a 204 with `x-adxkit-no-bid: overloaded` is an auction not run (shed); any
 * other 200/204 in time is an auction run and answered in time. The first `settleSeconds` let the
 * target's admission rate settle: their answers are counted apart. Bounded: `rate × (settle +
 * seconds)` requests, then at most 5 s for the last answers.
 */
import { connect, type Socket } from "node:net";

/** What one run of the generator offered and got. */
export interface OverloadResult {
  offered: number;
  /** Requests due in the measured part (after the settling). */
  requests: number;
  answered: number;
  late: number;
  /** Auctions run and answered in time. */
  ranInTime: number;
  /** Answered 204 overloaded in time. */
  shed: number;
  /** Of the late answers, those that were sheds. */
  lateShed: number;
  errors: number;
  /** Requests the generator sent more than 10 ms after they were due (its own lag). */
  sentLate: number;
  sendLagMax: number;
  /** Of the late answers, those to requests the generator sent more than 10 ms late. */
  lateSentLate: number;
  /** The settling part: answers, of which late. */
  settling: { answered: number; late: number };
  /** The generator's CPU time over the run, µs (its process: user + system). */
  cpuMicros: number;
}

/** What `openLoop` is asked to offer. */
export interface OpenLoopOptions {
  url: string;
  body: string;
  rate: number;
  seconds: number;
  settleSeconds: number;
  connections: number;
  lateAfterMs: number;
}

interface Connection {
  socket: Socket;
  /** The request in flight on it: when it was due, whether it left late; undefined while idle. */
  due: number | undefined;
  sentLate: boolean;
  pending: Buffer | undefined;
}

// HTTP framing by hand, not undici: on the 2 cores it shares with what it measures, the
// generator's CPU per request decides how late it sends; undici's dispatch cost 112-173 µs of
// its process per request, these raw sockets 85-88 (3,000/s against a server answering at once,
// 2026-11-26 09:16, load 3.0-4.5).
const HEAD_END = Buffer.from("\r\n\r\n");
const CONTENT_LENGTH = /\r\ncontent-length: *(\d+)/i;
const SHED = /\r\nx-adxkit-no-bid: *overloaded/i;

/** Offers `rate` requests a second (see the file's comment); resolves once every answer is in or 5 s after the last was sent. */
export async function openLoop(options: OpenLoopOptions): Promise<OverloadResult> {
  const { rate, connections, lateAfterMs } = options;
  const target = new URL(options.url);
  const body = Buffer.from(options.body);
  const request = Buffer.concat([
    Buffer.from(`POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`, "latin1"),
    body,
  ]);
  const result: OverloadResult = {
    offered: rate, requests: 0, answered: 0, late: 0, ranInTime: 0, shed: 0, lateShed: 0, errors: 0, sentLate: 0, sendLagMax: 0, lateSentLate: 0,
    settling: { answered: 0, late: 0 }, cpuMicros: 0,
  };
  const idle: Connection[] = [];
  /** Requests due while every connection was busy: [due, sentLate] in order. */
  const waiting: [number, boolean][] = [];
  let open = 0;
  let outstanding = 0;
  let measureFrom = Infinity;
  let finished = false;
  const all = new Set<Connection>();
  let allAnswered: (() => void) | undefined;

  const send = (connection: Connection, due: number, sentLate: boolean) => {
    connection.due = due;
    connection.sentLate = sentLate;
    connection.socket.write(request);
  };
  const free = (connection: Connection) => {
    connection.due = undefined;
    const next = waiting.shift();
    if (next !== undefined) send(connection, next[0], next[1]);
    else idle.push(connection);
  };
  const settle = (due: number, sentLate: boolean, status: number, shed: boolean) => {
    outstanding--;
    const late = performance.now() - due > lateAfterMs;
    if (due < measureFrom) {
      result.settling.answered++;
      if (late) result.settling.late++;
    } else if (status !== 200 && status !== 204) result.errors++;
    else {
      result.answered++;
      if (late) {
        result.late++;
        if (shed) result.lateShed++;
        if (sentLate) result.lateSentLate++;
      } else if (shed) result.shed++;
      else result.ranInTime++;
    }
    if (outstanding === 0) allAnswered?.();
  };
  const opened = (): Promise<Connection> =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(target.port), target.hostname);
      socket.setNoDelay(true);
      const connection: Connection = { socket, due: undefined, sentLate: false, pending: undefined };
      open++;
      all.add(connection);
      socket.once("connect", () => resolve(connection));
      socket.on("data", (chunk: Buffer) => {
        let data = connection.pending === undefined ? chunk : Buffer.concat([connection.pending, chunk]);
        for (;;) {
          const end = data.indexOf(HEAD_END);
          if (end < 0) break;
          const head = data.toString("latin1", 0, end);
          const length = Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0); // Fastify frames every answer with content-length (204: none)
          if (data.length < end + 4 + length) break;
          const due = connection.due!;
          const sentLate = connection.sentLate;
          data = data.subarray(end + 4 + length);
          free(connection);
          settle(due, sentLate, Number(head.slice(9, 12)), SHED.test(head));
        }
        connection.pending = data.length > 0 ? data : undefined;
      });
      const gone = (error?: Error) => {
        if (!all.delete(connection)) return;
        if (!socket.destroyed) socket.destroy();
        open--;
        const at = idle.indexOf(connection);
        if (at >= 0) idle.splice(at, 1);
        if (connection.due !== undefined && !finished) {
          const due = connection.due;
          connection.due = undefined;
          settle(due, connection.sentLate, 0, false); // counted an error (status 0)
        }
        reject(error ?? new Error("closed"));
      };
      socket.once("error", gone);
      socket.once("close", () => gone());
    });
  const dispatch = (due: number, sentLate: boolean) => {
    outstanding++;
    const connection = idle.pop();
    if (connection !== undefined) return send(connection, due, sentLate);
    waiting.push([due, sentLate]);
    if (open < connections) opened().then(free, () => undefined);
  };

  // Connections for 100 ms of the offer opened before the clock starts (more open as needed).
  const ahead = await Promise.allSettled(Array.from({ length: Math.min(connections, Math.ceil(rate / 10)) }, opened));
  for (const c of ahead) if (c.status === "fulfilled") idle.push(c.value);
  const cpuBefore = process.cpuUsage();
  const total = Math.round(rate * (options.settleSeconds + options.seconds));
  const started = performance.now();
  measureFrom = started + options.settleSeconds * 1000;
  await new Promise<void>((done) => {
    let sent = 0;
    const tick = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - started) / 1000) * rate) + 1);
      for (; sent < due; sent++) {
        const dueAt = started + (sent / rate) * 1000;
        const lag = now - dueAt;
        if (dueAt >= measureFrom) {
          result.requests++;
          if (lag > 10) result.sentLate++;
          result.sendLagMax = Math.max(result.sendLagMax, lag);
        }
        dispatch(dueAt, lag > 10);
      }
      if (sent < total) setTimeout(tick, 1);
      else done();
    };
    tick();
  });
  await Promise.race([
    new Promise<void>((resolve) => (outstanding === 0 ? resolve() : (allAnswered = resolve))),
    new Promise((resolve) => setTimeout(resolve, 5_000)),
  ]);
  const cpu = process.cpuUsage(cpuBefore);
  result.cpuMicros = cpu.user + cpu.system;
  finished = true;
  result.errors += outstanding; // unanswered after 5 s
  for (const connection of [...all]) connection.socket.destroy();
  return result;
}

/** Two runs against the same target, as one. */
export function addOverload(a: OverloadResult, b: OverloadResult): OverloadResult {
  return {
    offered: a.offered,
    requests: a.requests + b.requests,
    answered: a.answered + b.answered,
    late: a.late + b.late,
    ranInTime: a.ranInTime + b.ranInTime,
    shed: a.shed + b.shed,
    lateShed: a.lateShed + b.lateShed,
    errors: a.errors + b.errors,
    sentLate: a.sentLate + b.sentLate,
    sendLagMax: Math.max(a.sendLagMax, b.sendLagMax),
    lateSentLate: a.lateSentLate + b.lateSentLate,
    settling: { answered: a.settling.answered + b.settling.answered, late: a.settling.late + b.settling.late },
    cpuMicros: a.cpuMicros + b.cpuMicros,
  };
}
