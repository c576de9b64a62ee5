#!/usr/bin/env node
// The adxkit command: runs the compiled CLI (built by `npm install` through `prepare`, and by
// `npm run generate` and `npm run build`).
import { main } from "../dist/service/cli/main.js";

// A reader that goes away (`adxkit accounts list | head`) ends the command quietly, not with an
// EPIPE stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
}

main().then((code) => {
  // A failed command ends now, even where something it started (a server, bidders) still holds
  // the event loop; a command that succeeded keeps running until its work is done (serve, demo).
  if (code !== 0) process.exit(code);
});
