/**
 * Starting the real MCP servers for tests: the npm reference servers (by their JS entry, run
 * with this Node) and our tiny test server (through tsx).
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { McpServerSpec } from "../../src/mcp/types.js";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

export type ReferenceServer = "everything" | "filesystem" | "memory";

/** Absolute path of a reference server's JS entry (its `bin`). */
export function serverEntry(name: ReferenceServer): string {
  const pkgJson = require.resolve(`@modelcontextprotocol/server-${name}/package.json`);
  const pkg = JSON.parse(readFileSync(pkgJson, "utf8")) as { bin: Record<string, string> };
  const bin = Object.values(pkg.bin)[0];
  if (!bin) throw new Error(`no bin in server-${name}`);
  return path.join(path.dirname(pkgJson), bin);
}

export function referenceSpec(name: ReferenceServer, args: string[] = [], env?: Record<string, string>): McpServerSpec {
  return { command: process.execPath, args: [serverEntry(name), ...args], ...(env ? { env } : {}) };
}

/** Our test server (test/mcp/servers/test-server.ts). */
export function testServerSpec(env?: Record<string, string>): McpServerSpec {
  return {
    command: process.execPath,
    args: ["--import", "tsx", path.join(here, "servers", "test-server.ts")],
    cwd: path.resolve(here, "../.."),
    ...(env ? { env } : {}),
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export interface HttpServerProcess {
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `PORT=<port> node <everything> streamableHttp|sse`, resolved once the port accepts connections. */
export async function startEverythingHttp(mode: "streamableHttp" | "sse", port?: number): Promise<HttpServerProcess> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, [serverEntry("everything"), mode], {
    env: { ...process.env, PORT: String(p) },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 15_000;
  while (!(await canConnect(p))) {
    if (child.exitCode !== null) throw new Error(`everything ${mode} exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`everything ${mode} did not listen on ${p}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port: p,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const ctx = { callId: "call_1", workspace: "/tmp" };

export function textOfOutput(output: unknown): string {
  if (typeof output === "string") return output;
  const content = (output as { content: { type: string; text?: string }[] }).content;
  return content
    .filter((p) => p.type === "text")
    .map((p) => p.text ?? "")
    .join("\n");
}
