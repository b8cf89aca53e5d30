#!/usr/bin/env node
// Thin launcher: the CLI lives in dist/ (built by `npm install` via the prepare script).
import { main } from "../dist/cli/main.js";

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`nanobot: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
