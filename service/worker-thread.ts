/**
 * Starting a worker thread on a module of this package: dist/ runs the compiled .js; sources run
 * as TypeScript (tests, tsx) load the .ts source through tsx's loader, registered inside the
 * worker (an --import flag in the worker's execArgv does not reach its module loader on Node 20).
 */
import { Worker, type WorkerOptions } from "node:worker_threads";

/** A worker running the module `name` (no extension) beside the module whose `import.meta.url` is `from`. */
export function startWorker(from: string, name: string, options: WorkerOptions = {}): Worker {
  if (!from.endsWith(".ts")) return new Worker(new URL(`./${name}.js`, from), options);
  const source = JSON.stringify(new URL(`./${name}.ts`, from).href);
  return new Worker(`import("tsx/esm/api").then(({ register }) => { register(); return import(${source}); });`, { ...options, eval: true });
}
