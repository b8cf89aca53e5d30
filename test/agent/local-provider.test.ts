import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { runSessionTurn } from "../../src/agent/session-turn.js";
import { resolveConfig } from "../../src/config/index.js";
import { ConfigError } from "../../src/core/errors.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

let root: string;
let fake: FakeLLM;
let models: Server;
let modelsUrl: string;
let runtime: Runtime | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-local-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
  // An "Ollama": /v1/models answered here, chat completions proxied to the scripted fake.
  models = createServer((req, res) => {
    if (req.url === "/v1/models") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ object: "list", data: [{ id: "llama3.2:latest", object: "model" }] }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      fetch(`${fake.url}${req.url}`, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) })
        .then(async (r) => {
          res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" });
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => models.listen(0, "127.0.0.1", resolve));
  modelsUrl = `http://127.0.0.1:${(models.address() as AddressInfo).port}/v1`;
});
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  await new Promise<void>((resolve) => models.close(() => resolve()));
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

function makeRuntime(env: Record<string, string>): Runtime {
  const fullEnv = { HOME: root, NANOBOT_HOME: join(root, "home"), ...env };
  const { config } = resolveConfig({ agents: { defaults: { workspace: join(root, "ws") } } }, { env: fullEnv, cwd: root });
  return new Runtime({ config, home: fullEnv.NANOBOT_HOME, env: fullEnv });
}

describe("with no provider configured, a local model server that answers is used", () => {
  it("detects the server's first model and runs a turn on it", async () => {
    runtime = makeRuntime({ OLLAMA_BASE_URL: modelsUrl });
    expect(await runtime.detectLocalProvider()).toBe("ollama/llama3.2:latest");
    const profile = await runtime.resolveAgent();
    fake.enqueue({ text: "local hello" });
    const result = await runSessionTurn(runtime, { sessionKey: "cli:local", content: "hi", profile });
    expect(result.content).toBe("local hello");
    expect(fake.requests[0]?.body.model).toBe("llama3.2:latest");
    fake.assertDone();
  });

  it("nothing listening: no model, and the configuration error says how to set one up", async () => {
    runtime = makeRuntime({ OLLAMA_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(await runtime.detectLocalProvider()).toBeUndefined();
    await expect(runtime.resolveAgent()).rejects.toThrow(ConfigError);
    await expect(runtime.resolveAgent()).rejects.toThrow(/nanobot onboard/);
  });

  it("a configured provider is never overridden by a local server", async () => {
    runtime = makeRuntime({ OLLAMA_BASE_URL: modelsUrl, OPENAI_API_KEY: "sk-configured" });
    expect(await runtime.detectLocalProvider()).toBeUndefined();
    expect(runtime.modelRefFor(undefined)).toMatch(/^openai\//);
  });
});
