/** Spawns the TypeScript helpers under test/session/helpers with tsx, as separate processes. */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));

export function spawnHelper(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", `${here}${script}`, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    cwd: fileURLToPath(new URL("../../..", import.meta.url)),
  });
}

/** Resolves with the first stdout line starting with `prefix`; rejects if the child exits first. */
export function waitForLine(child: ChildProcess, prefix: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith(prefix));
      if (line) resolve(line);
    });
    child.once("exit", (code, signal) => reject(new Error(`helper exited (${code ?? signal}) before ${prefix}: ${err}`)));
  });
}

export function waitForExit(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode, stderr });
    else child.once("exit", (code, signal) => resolve({ code, signal, stderr }));
  });
}
