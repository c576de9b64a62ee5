/**
 * `npm run test:busy`: the whole `npm test` beside two CPU-bound processes, as on a 2-core machine
 * shared with other work. No test's outcome may depend on the machine's speed; this is the proof.
 * The two busy loops are this script's children: they stop when `npm test` ends, or after an hour.
 * Extra arguments go to `npm test` (e.g. `npm run test:busy -- test/auction`).
 */
import { spawn, type ChildProcess } from "node:child_process";

const HOGS = 2;
const LIMIT_MS = 60 * 60_000;

const started = performance.now();
const hogs: ChildProcess[] = Array.from({ length: HOGS }, () =>
  // A busy loop that ends by itself at the limit, so no hog outlives a killed parent for long.
  spawn(process.execPath, ["-e", `const end = Date.now() + ${LIMIT_MS}; let x = 0; while (Date.now() < end) x = (x * 31 + 7) % 1000003;`], { stdio: "ignore" }),
);
const stopHogs = () => {
  for (const hog of hogs) if (hog.exitCode === null && hog.signalCode === null) hog.kill("SIGKILL");
};
process.on("exit", stopHogs);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    stopHogs();
    process.exit(130);
  });
}

process.stdout.write(`test:busy: ${HOGS} CPU-bound processes (pids ${hogs.map((h) => h.pid).join(", ")}) beside npm test\n`);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const test = spawn(npm, ["test", "--", ...process.argv.slice(2)], { stdio: "inherit" });
test.on("exit", (code, signal) => {
  stopHogs();
  const seconds = (performance.now() - started) / 1000;
  const minutes = `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  process.stdout.write(`test:busy: npm test ${code === 0 ? "passed" : `failed (${code ?? signal})`} beside ${HOGS} CPU-bound processes in ${minutes}\n`);
  process.exitCode = code ?? 1;
});
