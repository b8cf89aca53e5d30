/**
 * Runs the official MCP conformance suite CLI (`conformance server`) against a URL and reads
 * its per-scenario checks. Offline: the suite and the server both run on this machine.
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const cli = path.join(repo, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

export interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED" | (string & {});
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  passed: number;
  failed: Check[];
}

/** Runs the suite CLI without blocking this process (the server under test may live here). */
export function runSuite(url: string, suite: string, outDir: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, "server", "--url", url, "--suite", suite, "-o", outDir], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

/** `server-<scenario>-<ISO time>/checks.json` → results per scenario. */
export async function readResults(dir: string): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const entry of (await readdir(dir)).sort()) {
    const scenario = entry.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
    const checks = JSON.parse(await readFile(path.join(dir, entry, "checks.json"), "utf8")) as Check[];
    results.push({
      scenario,
      passed: checks.filter((c) => c.status === "SUCCESS").length,
      failed: checks.filter((c) => c.status === "FAILURE"),
    });
  }
  return results;
}
