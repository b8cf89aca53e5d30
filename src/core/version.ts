import { readFileSync } from "node:fs";

/**
 * The package version. Both `src/core/` (tsx) and `dist/core/` (built) sit two levels below the
 * package root, so one relative URL serves both.
 */
export function packageVersion(): string {
  const text = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
  const pkg = JSON.parse(text) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "0.0.0";
}
