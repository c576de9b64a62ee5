/** A DuckDB file another process holds: openStore fails at once with ADX_ERR_STORE_LOCKED, naming that process. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { openStore } from "../../service/store/index.js";

const dir = mkdtempSync(join(tmpdir(), "adxkit-locked-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a database file held by another process is refused with one line naming it", { timeout: 60_000 }, async () => {
  const db = join(dir, "adxkit.duckdb");
  // The holder opens the file, says so, and waits until it is killed.
  const holder = spawn(process.execPath, ["-e", `import("@duckdb/node-api").then(async ({ DuckDBInstance }) => { globalThis.db = await DuckDBInstance.create(${JSON.stringify(db)}); console.log("holding"); setInterval(() => {}, 1000); })`], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("holding") && resolve());
      holder.once("exit", (code) => reject(new Error(`the holder exited with ${code}`)));
    });
    const error = await openStore({ db }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "ADX_ERR_STORE_LOCKED" });
    expect((error as Error).message).toMatch(new RegExp(`^${db.replace(/[.]/g, "\\.")} is locked by another process \\(PID ${holder.pid}: .*node.*\\); DuckDB lets one process open a database file: stop that process or use another database$`));
  } finally {
    holder.kill("SIGKILL");
  }
});
