// Slots (service/store/duckdb/connection.ts): work runs at most n at a time, the rest in arrival
// order, and a failure frees its slot.
import { describe, expect, it } from "vitest";
import { Slots } from "../../service/store/duckdb/connection.js";

/** Work that records when it starts and ends, and finishes when told. */
function tracked(log: string[]) {
  const finish = new Map<string, () => void>();
  const work = (name: string, fail = false) => () =>
    new Promise<string>((resolve, reject) => {
      log.push(`start ${name}`);
      finish.set(name, () => {
        log.push(`end ${name}`);
        if (fail) reject(new Error(name));
        else resolve(name);
      });
    });
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const end = async (name: string) => {
    finish.get(name)!();
    await tick();
  };
  return { work, finish: end, tick };
}

describe("Slots", () => {
  it("runs at most n at a time; the next waiting one starts when one ends", async () => {
    const log: string[] = [];
    const { work, finish, tick } = tracked(log);
    const slots = new Slots(2);
    const done = ["a", "b", "c", "d"].map((name) => slots.run(work(name)));
    await tick();
    expect(log).toEqual(["start a", "start b"]);
    await finish("b");
    expect(log).toEqual(["start a", "start b", "end b", "start c"]);
    await finish("a");
    await finish("c");
    await finish("d");
    expect(await Promise.all(done)).toEqual(["a", "b", "c", "d"]);
    expect(log.filter((l) => l.startsWith("start"))).toEqual(["start a", "start b", "start c", "start d"]);
  });

  it("frees the slot of work that fails", async () => {
    const log: string[] = [];
    const { work, finish, tick } = tracked(log);
    const slots = new Slots(1);
    const failing = slots.run(work("a", true));
    const failed = expect(failing).rejects.toThrow("a");
    const next = slots.run(work("b"));
    await tick();
    await finish("a");
    await failed;
    expect(log).toEqual(["start a", "end a", "start b"]);
    await finish("b");
    expect(await next).toBe("b");
    // And it is free again afterwards.
    const again = slots.run(async () => "c");
    expect(await again).toBe("c");
  });
});
