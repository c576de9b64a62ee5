/**
 * `adxkit serve` as a real child process, for the tests that need one (several nodes, kill -9):
 * a free loopback port, start (resolves on the listening line, bounded), stop (SIGTERM, bounded)
 * and kill (SIGKILL). Runs the compiled CLI: `BUILT` says whether dist/ exists (npm test builds it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
export const CLI = join(ROOT, "bin/adxkit.js");
export const BUILT = existsSync(join(ROOT, "dist/service/cli/main.js"));

export interface ServerProcess {
  name: string;
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr so far. */
  stderr: string[];
  /** Its log lines (pino JSON on stdout, at --log-level warn) so far. */
  stdout: string[];
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

/** A free TCP port on 127.0.0.1 (a node's default public URL needs its real port). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/**
 * Starts `adxkit serve ARGS --port PORT` and resolves once it prints its listening line (within 60 s: a loaded machine starts slowly).
 * `ownGroup`: in a session of its own, so in a scheduling group (autogroup) of its own: threads it
 * puts under SCHED_IDLE then yield to its own threads only, not to the test run's other work
 * (`npm run test:busy`'s CPU-bound processes would otherwise leave them no core at all).
 */
export async function startServerProcess(name: string, args: string[], port: number, env: NodeJS.ProcessEnv = process.env, ownGroup = false): Promise<ServerProcess> {
  const child = spawn(process.execPath, [CLI, "serve", ...args, "--port", String(port), "--log-level", "warn"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: ownGroup });
  const stderr: string[] = [];
  const stdout: string[] = [];
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => stdout.push(chunk));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${name} did not start within 60 s: ${stderr.join("")}`)), 60_000);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr.push(chunk);
      if (stderr.join("").includes("adxkit: listening on")) {
        clearTimeout(timer);
        done();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`${name} exited (code ${code}) before listening: ${stderr.join("")}`));
    });
  });
  return { name, url: `http://127.0.0.1:${port}`, child, stderr, stdout, exited };
}

/** SIGTERM, then the exit code; SIGKILL and a failure after `ms`. */
export async function stopServerProcess(node: ServerProcess, ms = 15_000): Promise<number | null> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return node.child.exitCode;
  node.child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((done) => (timer = setTimeout(() => done("timeout"), ms)));
  const result = await Promise.race([node.exited, timeout]);
  clearTimeout(timer);
  if (result === "timeout") {
    node.child.kill("SIGKILL");
    throw new Error(`${node.name} did not exit within ${ms} ms of SIGTERM: ${node.stderr.join("")}`);
  }
  return result;
}

/** SIGKILL (kill -9: no handler runs, nothing is flushed) and wait for the process to be gone. */
export async function killServerProcess(node: ServerProcess): Promise<void> {
  if (node.child.exitCode === null && node.child.signalCode === null) node.child.kill("SIGKILL");
  await node.exited;
}
