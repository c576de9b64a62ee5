/** service/events/spool.ts: append, group commit, replay after a position, torn and corrupt lines, rotation, release, the lock. */
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatPosition, LineBuilder, parsePosition, Spool, SpoolLockedError, SpoolOwnerError } from "../../service/events/spool.js";

let dir: string;
const open: Spool[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "adxkit-spool-"));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

function spool(options: { maxSegmentBytes?: number; database?: string } = {}): Spool {
  const s = Spool.open(dir, options);
  open.push(s);
  return s;
}

/** Closes the spool (as a process would at exit) and reads everything back through a new one. */
async function reopenAndReplay(s: Spool, after?: { segment: number; line: number }) {
  await s.close();
  open.splice(open.indexOf(s), 1);
  const again = spool();
  return [...again.replay(after)];
}

const segmentFiles = () => readdirSync(dir).filter((f) => f.endsWith(".spool")).sort();

describe("spool", () => {
  it("replays what was appended, in order, each record with the position just past it", async () => {
    const s = spool();
    s.start();
    await Promise.all([s.append({ n: 1 }), s.append({ n: 2 }), s.append({ n: 3 }, true)]);
    expect(s.position).toEqual({ segment: 1, line: 3 });
    const replayed = await reopenAndReplay(s);
    expect(replayed.map((r) => r.record)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(replayed.map((r) => formatPosition(r.position))).toEqual(["1:1", "1:2", "1:3"]);
  });

  it("builds a LineBuilder's record when it writes the line; durable() waits for an fdatasync of every line so far", async () => {
    const s = spool();
    s.start();
    const items: number[] = [];
    const written = s.append(new LineBuilder(() => ({ items: [...items] })));
    items.push(1, 2);
    const onDisk = s.durable();
    items.push(3); // still before the write: part of the line
    await Promise.all([written, onDisk]);
    expect(s.stats()).toMatchObject({ appended: 1, writes: 1, syncs: 1 });
    items.push(4); // after the write: not
    await s.durable(); // nothing pending: a new fdatasync of what is written
    expect(s.stats()).toMatchObject({ writes: 1, syncs: 2 });
    expect((await reopenAndReplay(s)).map((r) => r.record)).toEqual([{ items: [1, 2, 3] }]);
  });

  it("refuses durable() before start and after close", async () => {
    const s = spool();
    await expect(s.durable()).rejects.toThrow("spool not started");
    s.start();
    await s.close();
    await expect(s.durable()).rejects.toThrow("spool closed");
  });

  it("replays only what comes after a position, across segments; a start opens a new segment", async () => {
    const first = spool();
    first.start();
    await Promise.all([first.append("a"), first.append("b")]);
    await first.close();
    open.length = 0;
    const second = spool();
    expect([...second.replay()].map((r) => r.record)).toEqual(["a", "b"]);
    second.start();
    await second.append("c");
    expect(second.position).toEqual({ segment: 2, line: 1 });
    const after = await reopenAndReplay(second, { segment: 1, line: 1 });
    expect(after.map((r) => r.record)).toEqual(["b", "c"]);
    expect(segmentFiles()).toEqual(["0000000001.spool", "0000000002.spool"]);
  });

  it("writes the appends of one event-loop turn with one write, and syncs the sync ones", async () => {
    const s = spool();
    s.start();
    await Promise.all(Array.from({ length: 50 }, (_, i) => s.append({ i }, i % 10 === 0)));
    expect(s.stats()).toMatchObject({ appended: 50, writes: 1 });
    expect(s.stats().syncs).toBeGreaterThanOrEqual(1);
    await s.append({ i: 50 });
    expect(s.stats().writes).toBe(2);
  });

  it("stops a segment's replay at a line cut short or failing its checksum, and goes on with the next segment", async () => {
    const s = spool();
    s.start();
    await Promise.all([s.append({ ok: 1 }), s.append({ ok: 2 })]);
    await s.close();
    open.length = 0;
    const file = join(dir, "0000000001.spool");
    // A torn write: the start of a line without its end.
    appendFileSync(file, '00000000 {"torn":');
    expect([...spool().replay()].map((r) => r.record)).toEqual([{ ok: 1 }, { ok: 2 }]);
    await open.pop()!.close();
    // A corrupt line in the middle ends that segment's replay; the next segment still replays.
    const text = readFileSync(file, "utf8").replace('{"ok":1}', '{"ok":7}');
    writeFileSync(file, text);
    const next = spool();
    next.start();
    await next.append({ next: true });
    expect((await reopenAndReplay(next)).map((r) => r.record)).toEqual([{ next: true }]);
  });

  it("rotates past the segment size and releases the segments wholly before a position", async () => {
    const s = spool({ maxSegmentBytes: 200 });
    s.start();
    for (let i = 0; i < 12; i++) await s.append({ i, pad: "x".repeat(40) });
    const segments = segmentFiles();
    expect(segments.length).toBeGreaterThan(3);
    expect([...s.replay()].map((r) => (r.record as { i: number }).i)).toEqual([...Array(12).keys()]);
    const current = s.position;
    s.release({ segment: 3, line: 0 });
    expect(segmentFiles()).toEqual(segments.filter((f) => Number(f.slice(0, 10)) >= 3));
    // Never the segment being written, whatever the position says.
    s.release({ segment: current.segment + 5, line: 0 });
    expect(segmentFiles()).toEqual([`${String(current.segment).padStart(10, "0")}.spool`]);
    expect(s.stats().released).toBe(segments.length - 1);
  });

  it("a position taken at any moment replays exactly the lines appended after it, across rotations and syncs", async () => {
    const s = spool({ maxSegmentBytes: 120 });
    s.start();
    const snapshots: { position: { segment: number; line: number }; count: number }[] = [];
    const appends: Promise<void>[] = [];
    let n = 0;
    for (let round = 0; round < 60; round++) {
      for (let k = 0; k <= round % 4; k++) appends.push(s.append({ n: n++ }, (round + k) % 3 === 0));
      snapshots.push({ position: s.position, count: n });
      // Let commits, fdatasyncs and rotations land between appends in varying ways.
      if (round % 2 === 0) await new Promise((resolve) => setImmediate(resolve));
      if (round % 7 === 0) await Promise.all(appends);
    }
    await Promise.all(appends);
    expect(s.stats().segment).toBeGreaterThan(5);
    for (const { position, count } of snapshots) {
      expect([...s.replay(position)].map((r) => (r.record as { n: number }).n)).toEqual(Array.from({ length: n - count }, (_, i) => count + i));
    }
  });

  it("refuses a second live writer, takes over the lock of a dead one, and keeps its node id", async () => {
    const s = spool();
    const nodeId = s.nodeId;
    expect(() => Spool.open(dir)).toThrow(SpoolLockedError);
    await s.close();
    open.length = 0;
    // A lock left by a process that died (kill -9): a pid that no longer runs.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    writeFileSync(join(dir, "lock"), dead.stdout);
    const again = spool();
    expect(again.nodeId).toBe(nodeId);
    expect(readFileSync(join(dir, "lock"), "utf8")).toBe(String(process.pid));
  });

  it("records the database it belongs to at its first open, and refuses another", async () => {
    const s = spool({ database: "/srv/a/adxkit.duckdb" });
    expect(readFileSync(join(dir, "database"), "utf8")).toBe("/srv/a/adxkit.duckdb\n");
    await s.close();
    open.length = 0;
    expect(() => Spool.open(dir, { database: "/srv/b/adxkit.duckdb" })).toThrow(SpoolOwnerError);
    expect(() => Spool.open(dir, { database: "/srv/b/adxkit.duckdb" })).toThrow(`spool ${dir} belongs to the database /srv/a/adxkit.duckdb, not /srv/b/adxkit.duckdb`);
    // Refused before its lock is taken: the owner opens it as before.
    spool({ database: "/srv/a/adxkit.duckdb" });
  });

  it("rejects appends before start and after close; positions read back from their text", async () => {
    const s = spool();
    await expect(s.append("x")).rejects.toThrow(/not started/);
    s.start();
    await s.close();
    await expect(s.append("x")).rejects.toThrow(/closed/);
    expect(parsePosition("12:345")).toEqual({ segment: 12, line: 345 });
    for (const bad of [undefined, "", "1", "1:", ":2", "a:b", "1:2:3", "-1:2"]) expect(parsePosition(bad)).toBeUndefined();
  });
});
