import { execFileSync } from "node:child_process";

/** Whether util-linux's chrt runs here: SCHED_IDLE (`--background-idle`, thread-priority.ts `idlePolicy`) needs it. */
export function hasChrt(): boolean {
  try {
    execFileSync("chrt", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

