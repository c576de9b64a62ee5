// Reports' answer buffers (service/store/duckdb/answer-buffers.ts): a buffer serves a second answer
// only after the first released it, small answers are never pooled, and the pool stays bounded.
import { describe, expect, it } from "vitest";
import { AnswerBuffers, POOLED_FROM_BYTES } from "../../service/store/duckdb/answer-buffers.js";

const MB = 1024 * 1024;

describe("AnswerBuffers", () => {
  it("lends its largest free memory to another thread and keeps what comes back", () => {
    const buffers = new AnswerBuffers();
    expect(buffers.takeSpare()).toBeUndefined();
    const [a, b] = [buffers.take(1 * MB), buffers.take(2 * MB)];
    a.release();
    b.release();
    const spare = buffers.takeSpare();
    expect(spare).toBe(b.bytes.buffer);
    expect(buffers.kept.buffers).toBe(1);
    // Written elsewhere and moved back: the answer is its first bytes; released, the memory serves again.
    const answer = buffers.adopt(spare!, 10);
    expect(answer.bytes.length).toBe(10);
    expect(buffers.kept.buffers).toBe(1);
    answer.release();
    answer.release();
    expect(buffers.kept.buffers).toBe(2);
    expect(buffers.take(2 * MB).bytes.buffer).toBe(spare);
    // Small memory is not kept.
    buffers.give(new ArrayBuffer(POOLED_FROM_BYTES - 1));
    expect(buffers.kept.buffers).toBe(1);
  });

  it("hands a buffer out again only once it was released, and the exact size asked for", () => {
    const buffers = new AnswerBuffers();
    const first = buffers.take(4 * MB);
    expect(first.bytes.length).toBe(4 * MB);
    const second = buffers.take(4 * MB);
    expect(second.bytes.buffer).not.toBe(first.bytes.buffer);
    first.release();
    const third = buffers.take(3 * MB);
    expect(third.bytes.buffer).toBe(first.bytes.buffer);
    expect(third.bytes.length).toBe(3 * MB);
    // Released twice: still one buffer in the pool, not two handles on the same memory.
    first.release();
    expect(buffers.kept.buffers).toBe(0);
    expect(buffers.take(3 * MB).bytes.buffer).not.toBe(third.bytes.buffer);
  });

  it("gives a larger answer a new buffer rather than one too small, with room for a little more", () => {
    const buffers = new AnswerBuffers();
    const small = buffers.take(1 * MB);
    small.release();
    const large = buffers.take(4 * MB);
    expect(large.bytes.buffer).not.toBe(small.bytes.buffer);
    expect(large.bytes.buffer.byteLength).toBeGreaterThanOrEqual(5 * MB);
    large.release();
    // Of the two free ones, the smallest that holds it.
    expect(buffers.take(MB / 2).bytes.buffer).toBe(small.bytes.buffer);
  });

  it("never pools small answers", () => {
    const buffers = new AnswerBuffers();
    const small = buffers.take(POOLED_FROM_BYTES - 1);
    small.release();
    expect(buffers.kept.buffers).toBe(0);
  });

  it("keeps at most four buffers, the largest, and none past 32 MiB", () => {
    const buffers = new AnswerBuffers();
    const taken = [1, 2, 3, 4, 5].map((n) => buffers.take(n * MB));
    for (const answer of taken) answer.release();
    expect(buffers.kept.buffers).toBe(4);
    expect(buffers.take(MB).bytes.buffer).toBe(taken[1].bytes.buffer);
    const huge = buffers.take(40 * MB);
    huge.release();
    expect(buffers.kept.buffers).toBe(3);
  });
});
