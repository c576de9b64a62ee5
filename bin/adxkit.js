#!/usr/bin/env node
// The adxkit command: runs the compiled CLI (built by `npm install` through `prepare`).
import { main } from "../dist/service/cli/main.js";

main().then((code) => {
  process.exitCode = code;
});
