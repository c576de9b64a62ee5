/**
 * Buffers for reports' answers, reused. A month by date × country × app is 4 MB of JSON; a fresh
 * buffer per answer is external memory, which V8 counts towards its next full collection (one
 * traced run: a 12.7 ms mark-compact, which every request waiting on the event loop waited
 * through). A buffer comes back once its answer is written out (`ReportJson.release`), so a
 * server answering heavy reports one after another keeps writing into the same few.
 */

/** Answers below this get a buffer of their own: they add little to what the collector counts. */
export const POOLED_FROM_BYTES = 64 * 1024;
/** At most this many buffers wait for reuse… */
const KEEP = 4;
/** …none larger than this. */
const MAX_KEPT_BYTES = 32 * 1024 * 1024;
/** A new buffer's room beyond its first answer, for a later answer that is a little larger. */
const HEADROOM = 1.25;
const ALIGN = 64 * 1024;

/** The size of a new buffer for an answer of `size` bytes. */
export const roomFor = (size: number) => Math.ceil((size * HEADROOM) / ALIGN) * ALIGN;

/** A buffer taken for one answer. */
export interface AnswerBuffer {
  /** Exactly the bytes asked for, to fill. */
  bytes: Buffer;
  /** Gives the buffer back for a later answer: once nothing reads `bytes` any more. A second call does nothing. */
  release: () => void;
}

/** The buffers of one store's answers. */
export class AnswerBuffers {
  private readonly free: Buffer[] = [];

  /** A buffer of `size` bytes: a free one that holds it (the smallest), else a new one. */
  take(size: number): AnswerBuffer {
    if (size < POOLED_FROM_BYTES) return { bytes: Buffer.allocUnsafe(size), release: () => {} };
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      if (this.free[i].length >= size && (best < 0 || this.free[i].length < this.free[best].length)) best = i;
    }
    const whole = best >= 0 ? this.free.splice(best, 1)[0] : Buffer.allocUnsafe(roomFor(size));
    let released = false;
    return {
      bytes: whole.subarray(0, size),
      release: () => {
        if (released) return;
        released = true;
        this.keep(whole);
      },
    };
  }

  /**
   * The largest free buffer's memory, taken out of the store's keeping, to move to the report
   * writer's thread (report-writer-thread.ts), which writes into it if it is large enough and
   * gives it back either way (`adopt`, `give`).
   */
  takeSpare(): ArrayBuffer | undefined {
    let largest = -1;
    for (let i = 0; i < this.free.length; i++) if (largest < 0 || this.free[i].length > this.free[largest].length) largest = i;
    if (largest < 0) return undefined;
    const [whole] = this.free.splice(largest, 1);
    // A buffer of its own memory (as allocUnsafe gives from 4 KiB); another is not moved.
    return whole.byteOffset === 0 && whole.buffer.byteLength === whole.length ? (whole.buffer as ArrayBuffer) : undefined;
  }

  /** An answer written into `memory` (moved here from another thread), its first `length` bytes; released, the memory serves later answers. */
  adopt(memory: ArrayBuffer, length: number): AnswerBuffer {
    let released = false;
    return {
      bytes: Buffer.from(memory, 0, length),
      release: () => {
        if (released) return;
        released = true;
        this.give(memory);
      },
    };
  }

  /** Keeps `memory` (moved back from another thread) for a later answer. */
  give(memory: ArrayBuffer): void {
    if (memory.byteLength >= POOLED_FROM_BYTES) this.keep(Buffer.from(memory));
  }

  /** How many buffers wait for reuse, and their bytes (tests, metrics). */
  get kept(): { buffers: number; bytes: number } {
    return { buffers: this.free.length, bytes: this.free.reduce((sum, b) => sum + b.length, 0) };
  }

  private keep(whole: Buffer): void {
    if (whole.length > MAX_KEPT_BYTES) return;
    if (this.free.length >= KEEP) {
      // The larger ones stay: they serve every answer a smaller one would.
      let smallest = 0;
      for (let i = 1; i < this.free.length; i++) if (this.free[i].length < this.free[smallest].length) smallest = i;
      if (this.free[smallest].length >= whole.length) return;
      this.free.splice(smallest, 1);
    }
    this.free.push(whole);
  }
}
