#!/usr/bin/env node
// Thin launcher: the CLI lives in dist/ (built by `npm install` via the prepare script).
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  // Answered without loading the CLI: scripts call this often.
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${pkg.version}\n`);
} else {
  // The bundled CLI starts faster (scripts/bundle-cli.mjs, bin/bundle-loader.js); tsc's output alone works too.
  const bundled = fileURLToPath(new URL("../dist/bundle/main.cjs", import.meta.url));
  const { main } = existsSync(bundled)
    ? (await import("./bundle-loader.js")).loadBundle(bundled)
    : await import("../dist/cli/main.js");
  main(process.argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`nanobot: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
