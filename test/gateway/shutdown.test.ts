import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerGatewayCommand } from "../../src/cli/commands/gateway.js";
import { createContext } from "../../src/cli/context.js";
import { SqliteSessionStore } from "../../src/session/sqlite-store.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { waitFor } from "./helpers.js";

let root: string;
let fake: FakeLLM;
let configPath: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-gw-stop-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
  configPath = join(root, "nanobot.json");
  await writeFile(
    configPath,
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-stop-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
    }),
  );
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

function listeningUrl(out: string): string | undefined {
  return /listening on (http:\/\/\S+)/.exec(out)?.[1];
}

describe("nanobot gateway", () => {
  it("prints the listening line, and on stop saves the in-flight turn as stopped and exits 0", async () => {
    let out = "";
    const env = { HOME: root, NANOBOT_HOME: join(root, "home") };
    const ctx = createContext({ stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, env, cwd: root }, "test");
    let stop: (name: string) => void = () => undefined;
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    const program = new Command("nanobot").option("-c, --config <path>").exitOverride();
    registerGatewayCommand(program, ctx, () => stopped);
    const done = program.parseAsync(["node", "nanobot", "-c", configPath, "gateway", "--port", "0"], { from: "node" });

    await waitFor(() => listeningUrl(out) !== undefined, "the listening line");
    const url = listeningUrl(out) ?? "";
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    fake.enqueue({ text: "too late", delayMs: 60_000 });
    const inFlight = fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "nanobot", session_id: "slow", messages: [{ role: "user", content: "take your time" }] }),
    });
    await waitFor(() => fake.requests.length === 1, "the turn to reach the model");
    stop("SIGTERM");
    await done;
    expect(ctx.exitCode).toBe(0);
    const res = await inFlight;
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: "stopped" } });

    const store = new SqliteSessionStore({ path: join(root, "home", "state.db") });
    const statuses = await store.snapshot((q) => q.db.prepare("SELECT status, stop_reason FROM turns").all());
    const messages = await store.loadMessages("api:slow");
    await store.close();
    expect(statuses).toEqual([{ status: "stopped", stop_reason: "aborted" }]);
    expect(messages[0]).toMatchObject({ role: "user", content: [{ type: "text", text: "take your time" }] });
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  it("a real process exits 0 on SIGTERM, and refuses a non-loopback host without a key (exit 2)", async () => {
    const entry = join(import.meta.dirname, "fixtures", "gateway-entry.ts");
    const env = { ...process.env, HOME: root, NANOBOT_HOME: join(root, "home"), NO_COLOR: "1" };
    const run = (args: string[]) => {
      const child = spawn(process.execPath, ["--import", "tsx", entry, "-c", configPath, "gateway", ...args], { env, cwd: process.cwd() });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      return { child, exit, out: () => out, err: () => err };
    };

    const refused = run(["--host", "0.0.0.0", "--port", "0"]);
    expect(await refused.exit).toBe(2);
    expect(refused.err()).toContain("refusing to listen on 0.0.0.0 without an API key");

    const server = run(["--port", "0"]);
    await waitFor(() => listeningUrl(server.out()) !== undefined, "the listening line", 15_000);
    const health = await fetch(`${listeningUrl(server.out()) ?? ""}/health`);
    expect(await health.json()).toEqual({ status: "ok" });
    server.child.kill("SIGTERM");
    expect(await server.exit).toBe(0);
  });
});
