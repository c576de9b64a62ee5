/**
 * A task the server runs every so often (settling billed impressions, polling account changes),
 * one run at a time: a run still going when the next is due is not doubled, and `stop` waits for
 * it. The timer does not keep the process alive.
 */

/** Where a periodic task reports its failures and recoveries (the server's logger). */
export interface TaskLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** A running periodic task. */
export interface PeriodicTask {
  /** Runs the task now, or joins the run in progress; resolves when that run ends. */
  run(): Promise<void>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/** Runs `task` every `everyMs` (not at once: call `run()` for that). `task` handles its own failures; one that escapes is dropped. */
export function runEvery(everyMs: number, task: () => Promise<void>): PeriodicTask {
  let running: Promise<void> | undefined;
  const run = () =>
    (running ??= task()
      .catch(() => undefined)
      .finally(() => (running = undefined)));
  const timer = setInterval(run, everyMs);
  timer.unref();
  return {
    run,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
