#!/usr/bin/env node
// The adxkit command: runs the compiled CLI (built by `npm install` through `prepare`, and by
// `npm run generate` and `npm run build`).
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { staleSource } from "./stale-build.js";

// A reader that goes away (`adxkit accounts list | head`) ends the command quietly, not with an
// EPIPE stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}

const root = fileURLToPath(new URL("..", import.meta.url));
const stale = staleSource(root);
if (stale !== undefined) {
  process.stderr.write(`adxkit: ${relative(root, stale)} changed after the last build, and this runs the compiled code of that build: run \`npm run build\` first\n`);
}

let cli;
try {
  cli = await import("../dist/service/cli/main.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist")) throw error;
  process.stderr.write("adxkit: dist/ is not built: run `npm install` (or `npm run build`) in this repository first\n");
  process.exit(1);
}

cli.main().then((code) => {
  // A failed command ends now, even where something it started (a server, bidders) still holds
  // the event loop; a command that succeeded keeps running until its work is done (serve, demo).
  if (code !== 0) process.exit(code);
});
