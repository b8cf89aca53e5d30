/**
 * A Python nanobot user's config.json through the CLI (`main`, in-process): channels nanobot
 * does not have fail `config check` and are not "enabled" in `status`; a fork's provider name
 * is fine; every Python key nanobot does not act on is named "not supported by nanobot (TS)";
 * and the keys it does act on show their effect on the wire (fake LLM).
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CHANNEL_TYPES } from "../../src/channels/channel-types.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { assistantMessage, userMessage } from "../../src/core/message-helpers.js";
import { SqliteSessionStore } from "../../src/session/sqlite-store.js";
import { UNSUPPORTED_KEYS } from "../../src/config/python-keys.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import type { InProcessRun } from "../support/cli-in-process.js";

let root: string;
let workspace: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-python-keys-"));
  workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

async function withConfig(doc: Record<string, unknown>): Promise<void> {
  await writeFile(join(root, "config.json"), JSON.stringify(doc));
}

function base(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { agents, ...rest } = extra as { agents?: { defaults?: Record<string, unknown> } };
  return {
    providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-python-keys-0001" } },
    agents: { defaults: { model: "custom/test-model", workspace, ...agents?.defaults } },
    ...rest,
  };
}

function run(args: string[]): Promise<InProcessRun> {
  return runCliInProcess(["--config", join(root, "config.json"), ...args], { env: { HOME: root, NANOBOT_HOME: join(root, "nb") }, cwd: root });
}

describe("channel names", () => {
  it("the channel types config check accepts are the ones the gateway can start", () => {
    expect(Object.keys(defaultChannelFactories()).sort()).toEqual([...CHANNEL_TYPES].sort());
  });

  it("config check fails on an enabled channel nanobot does not have, with did-you-mean for a typo", async () => {
    await withConfig(base({ channels: { mochat: { enabled: true, token: "x" }, telegarm: { enabled: true, token: "1:a" }, feishu: { enabled: false } } }));
    const r = await run(["config", "check"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("channels.mochat is a Python nanobot channel that nanobot (TS) does not have (nanobot has telegram, websocket, email, discord, dingtalk, wecom, slack, feishu, msteams, mattermost, qq, matrix, signal, whatsapp, napcat, weixin)");
    expect(r.err).toContain('channels.telegarm is not a channel type (did you mean "telegram"?)');
    // A disabled one (the Python template lists them all) is no problem.
    expect(r.err).not.toContain("channels.feishu");
  });

  it("config check accepts a Python channels.discord and warns about the proxy keys it cannot honour", async () => {
    await withConfig(base({ channels: { discord: { enabled: true, token: "x", allowFrom: ["1"], groupPolicy: "open", proxy: "http://proxy:3128", proxyUsername: "u" } } }));
    const r = await run(["config", "check"]);
    expect(r.code).toBe(0);
    expect(r.err).toContain("channels.discord.proxy is not supported by nanobot's Discord channel");
    expect(r.err).toContain("unset channels.discord.proxy, channels.discord.proxyUsername");
  });

  it("status does not list them as enabled, and other commands still run with a warning", async () => {
    await withConfig(base({ channels: { mochat: { enabled: true }, telegram: { enabled: true, token: "1:a" } } }));
    const status = await run(["status", "--json"]);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.out) as { channels: string[]; unsupportedChannels: string[] };
    expect(report.channels).toEqual(["telegram"]);
    expect(report.unsupportedChannels).toEqual(["mochat"]);
    expect(status.err).toContain("channels.mochat is a Python nanobot channel");

    const text = await run(["status"]);
    expect(text.out).toMatch(/channels\s+telegram \(not started, not a nanobot channel: mochat\)/);

    fake.enqueue({ text: "still here" });
    const agent = await run(["agent", "-m", "hi"]);
    expect(agent).toMatchObject({ code: 0, out: "still here\n" });
  });

  it("gateway refuses to start with the same error, before it listens", async () => {
    await withConfig(base({ channels: { mochat: { enabled: true }, telegarm: { enabled: true, token: "1:a" } } }));
    const r = await run(["gateway", "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("config.json: channels.mochat is a Python nanobot channel that nanobot (TS) does not have");
    expect(r.err).toContain('channels.telegarm is not a channel type (did you mean "telegram"?)');
    expect(r.out).not.toContain("listening");
  });

  it("a channel entry with an explicit known type is fine", async () => {
    await withConfig(base({ channels: { work: { enabled: true, type: "telegram", token: "1:a" } } }));
    const r = await run(["config", "check"]);
    expect(r.code).toBe(0);
  });
});

describe("a fork's provider name", () => {
  it("loads with warnings for its unknown fields and serves the model", async () => {
    await withConfig({
      providers: { lazyllm: { apiKey: "sk-lazy-0001", apiBase: fake.openaiBaseURL, source: "sensenova", stream: true } },
      agents: { defaults: { model: "lazyllm/lazy-model", workspace } },
    });
    const check = await run(["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.err).toContain("unknown key providers.lazyllm.source (ignored)");
    fake.enqueue({ text: "lazy answer" });
    const agent = await run(["agent", "-m", "hi"]);
    expect(agent).toMatchObject({ code: 0, out: "lazy answer\n" });
    expect((fake.requests[0]?.body as { model: string }).model).toBe("lazy-model");
  });
});

describe("Python keys nanobot does not act on", () => {
  it("config check names each as not supported, with the reason, and not as an unknown key", async () => {
    await withConfig(
      base({
        agents: { defaults: { botIcon: "🤖" } },
        channels: { extractDocumentText: false },
        tools: { web: { proxy: "http://127.0.0.1:3128" }, exec: { sandboxRoBinds: ["/opt"] } },
        gateway: { restartMode: "exit" },
        transcription: { enabled: true, provider: "groq" },
      }),
    );
    const r = await run(["config", "check"]);
    expect(r.code).toBe(0);
    for (const path of [
      "agents.defaults.botIcon",
      "channels.extractDocumentText",
      "tools.web.proxy",
      "tools.exec.sandboxRoBinds",
      "gateway.restartMode",
      "transcription.provider",
    ]) {
      expect(r.err).toMatch(new RegExp(`config\\.json: ${path.replace(/\./g, "\\.")}: not supported by nanobot \\(TS\\): \\S`));
    }
    expect(r.err).not.toContain("unknown key");
    // The printed config does not claim them either.
    expect(r.out).not.toContain("botIcon");
    expect(r.out).not.toContain("3128");
  });

  it("values that ask for what nanobot does anyway, or equal the Python default, are quiet; every command prints the line once", async () => {
    await withConfig(
      base({
        agents: { defaults: { botName: "nanobot", botIcon: "🤖" } },
        channels: { showReasoning: false, extractDocumentText: true },
        tools: { web: { proxy: null }, my: { enable: false, allowSet: true }, cliApps: { enable: true, runTimeout: 60 } },
        transcription: { enabled: true, maxUploadMb: 25 },
      }),
    );
    fake.enqueue({ text: "ok" });
    const r = await run(["agent", "-m", "hi"]);
    expect(r.code).toBe(0);
    expect(r.err.match(/not supported by nanobot \(TS\)/g)).toHaveLength(1);
    expect(r.err).toContain("agents.defaults.botIcon: not supported by nanobot (TS)");
  });

  it("docs/python-config-keys.md lists every unsupported key", async () => {
    const doc = await readFile(new URL("../../docs/python-config-keys.md", import.meta.url), "utf8");
    // Tables are per section, so a key appears by its last name (`failOnToolError`, `api.apiKey`).
    for (const entry of UNSUPPORTED_KEYS) expect(doc).toMatch(new RegExp(`\`[^\`]*\\b${entry.path.at(-1)!}\``));
  });
});

describe("Python keys nanobot acts on", () => {
  let search: Server | undefined;
  afterEach(async () => {
    search?.closeAllConnections();
    await new Promise<void>((resolve) => (search ? search.close(() => resolve()) : resolve()));
    search = undefined;
  });

  it("tools.web.search.maxResults is how many results web_search returns by default", async () => {
    search = createServer((_req, res) => {
      const results = Array.from({ length: 8 }, (_, i) => ({ title: `Result ${i + 1}`, url: `https://example.com/${i + 1}`, content: "snippet" }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results }));
    });
    await new Promise<void>((resolve) => search!.listen(0, "127.0.0.1", resolve));
    const port = (search.address() as AddressInfo).port;
    await withConfig(base({ tools: { web: { search: { provider: "searxng", baseUrl: `http://127.0.0.1:${port}`, maxResults: 3 } } } }));
    fake.enqueue({ toolCalls: [{ id: "call_1", name: "web_search", arguments: { query: "cats" } }] }, { text: "done" });
    const r = await run(["agent", "-m", "search cats"]);
    expect(r.code).toBe(0);
    const tool = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === "tool");
    expect(tool?.content).toContain("3. Result 3");
    expect(tool?.content).not.toContain("Result 4");
    const described = (fake.requests[0]?.body as { tools: Array<{ function: { name: string; description: string } }> }).tools.find((t) => t.function.name === "web_search");
    expect(described?.function.description).toContain("default 3");
  });

  it("tools.web.userAgent is the User-Agent web_fetch sends", async () => {
    let agent: string | undefined;
    search = createServer((req, res) => {
      agent = req.headers["user-agent"];
      res.writeHead(200, { "content-type": "text/plain" }).end("page text");
    });
    await new Promise<void>((resolve) => search!.listen(0, "127.0.0.1", resolve));
    const port = (search.address() as AddressInfo).port;
    await withConfig(base({ tools: { web: { userAgent: "MyBot/1.0 (+https://example.com)" }, ssrfWhitelist: ["127.0.0.1/32"] } }));
    fake.enqueue({ toolCalls: [{ id: "call_1", name: "web_fetch", arguments: { url: `http://127.0.0.1:${port}/page` } }] }, { text: "done" });
    expect((await run(["agent", "-m", "fetch it"])).code).toBe(0);
    expect(agent).toBe("MyBot/1.0 (+https://example.com)");
  });

  it("tools.web.search.timeout is when web_search gives up", async () => {
    // A search backend that never answers.
    search = createServer(() => undefined);
    await new Promise<void>((resolve) => search!.listen(0, "127.0.0.1", resolve));
    const port = (search.address() as AddressInfo).port;
    await withConfig(base({ tools: { web: { search: { provider: "searxng", baseUrl: `http://127.0.0.1:${port}`, timeout: 1 } } } }));
    fake.enqueue({ toolCalls: [{ id: "call_1", name: "web_search", arguments: { query: "cats" } }] }, { text: "gave up" });
    const r = await run(["agent", "-m", "search cats"]);
    expect(r).toMatchObject({ code: 0, out: "gave up\n" });
    const tool = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === "tool");
    expect(tool?.content).toContain("web search failed");
  });

  it("providers.<name>.extraBody and extraQuery reach every model request", async () => {
    await withConfig({
      providers: {
        custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-python-keys-0002", extraBody: { enable_thinking: false, top_k: 20 }, extraQuery: { "api-version": "2024-10-21" } },
      },
      agents: { defaults: { model: "custom/test-model", workspace } },
    });
    fake.enqueue({ text: "ok" });
    expect((await run(["agent", "-m", "hi"])).code).toBe(0);
    const req = fake.requests[0]!;
    expect(req.body).toMatchObject({ enable_thinking: false, top_k: 20, model: "test-model" });
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.query).toBe("?api-version=2024-10-21");
  });

  it('providers.<name>.apiType "responses" sends the Responses API', async () => {
    await withConfig({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-python-keys-0003", apiType: "responses" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
    });
    fake.enqueue({ text: "via responses" });
    const r = await run(["agent", "-m", "hi"]);
    expect(r).toMatchObject({ code: 0, out: "via responses\n" });
    expect(fake.requests[0]?.path).toBe("/v1/responses");
    expect(r.err).not.toContain("apiType");
  });

  it('providers.anthropic.apiType "responses" is not applied to the Messages API, and says so', async () => {
    await withConfig({
      providers: { anthropic: { apiBase: fake.anthropicBaseURL, apiKey: "sk-ant-python-keys-0004", apiType: "responses" } },
      agents: { defaults: { model: "anthropic/claude-test", workspace } },
    });
    fake.enqueue({ text: "via messages" });
    const r = await run(["agent", "-m", "hi"]);
    expect(r).toMatchObject({ code: 0, out: "via messages\n" });
    expect(fake.requests[0]?.path).toBe("/v1/messages");
    expect(r.err).toContain('providers.anthropic.apiType: "responses" chooses between OpenAI\'s chat completions and responses APIs; anthropic speaks the Anthropic Messages API, so it is not applied');
  });

  it("tools.exec.pathPrepend puts its folder before PATH for commands", async () => {
    const bin = join(workspace, "bin");
    await mkdir(bin);
    // Shadows the system `date`: only a prepended folder wins over /usr/bin.
    await writeFile(join(bin, "date"), "#!/bin/sh\necho from-prepended-bin\n");
    await chmod(join(bin, "date"), 0o755);
    await withConfig(base({ tools: { exec: { pathPrepend: bin, sandbox: "none" } } }));
    fake.enqueue({ toolCalls: [{ id: "call_1", name: "exec", arguments: { command: "date" } }] }, { text: "done" });
    const r = await run(["agent", "-m", "what day is it"]);
    expect(r.code).toBe(0);
    const tool = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === "tool");
    expect(tool?.content).toContain("from-prepended-bin");
  });
});

describe("agents.defaults.contextBlockLimit", () => {
  it("is the prompt's token budget: a long session is cut to fit it", async () => {
    const store = new SqliteSessionStore({ path: join(root, "nb", "state.db") });
    const filler = "lorem ipsum dolor sit amet ".repeat(15);
    const history = Array.from({ length: 30 }, (_, i) => [userMessage(`question ${i} ${filler}`), assistantMessage(`answer ${i} ${filler}`)]).flat();
    await store.appendMessages("cli:long", history);
    await store.close();
    const sent = (i: number) => (fake.requests[i]?.body as { messages: Array<{ role: string }> }).messages;

    await withConfig(base());
    fake.enqueue({ text: "full" });
    expect((await run(["agent", "-m", "now", "-s", "cli:long"])).code).toBe(0);
    const full = sent(0).length;
    expect(full).toBeGreaterThanOrEqual(62);

    // A budget well under the whole prompt but above the system prompt and tools.
    const limit = Math.floor(JSON.stringify(fake.requests[0]?.body).length / 4) - 3_000;
    await withConfig(base({ agents: { defaults: { contextBlockLimit: limit } } }));
    fake.enqueue({ text: "cut" });
    const r = await run(["agent", "-m", "again", "-s", "cli:long"]);
    expect(r.code).toBe(0);
    const cut = sent(1);
    expect(cut.length).toBeLessThan(full);
    expect(JSON.stringify(cut.at(-1))).toContain("again");
  });
});

describe("agents.defaults.timezoneMode", () => {
  const zoneLine = (): string => {
    const system = (fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> }).messages[0]!.content;
    return /Current time: .*$/m.exec(system)?.[0] ?? "";
  };

  it('"manual" uses timezone as written; "auto" ignores it for the system zone', async () => {
    await withConfig(base({ agents: { defaults: { timezone: "Asia/Shanghai", timezoneMode: "manual" } } }));
    fake.enqueue({ text: "ok" });
    expect((await run(["agent", "-m", "hi"])).code).toBe(0);
    expect(zoneLine()).toContain("(Asia/Shanghai)");

    await withConfig(base({ agents: { defaults: { timezone: "Asia/Shanghai", timezoneMode: "auto" } } }));
    fake.enqueue({ text: "ok" });
    const r = await run(["agent", "-m", "hi"]);
    expect(r.code).toBe(0);
    expect(r.err).not.toContain("timezoneMode");
    expect(zoneLine()).not.toContain("Asia/Shanghai");
  });
});

describe("agents.defaults.failOnToolError", () => {
  // As in the Python nanobot, the key governs sub-agents (spawn) only, and defaults to true; a
  // main turn always lets the model see a tool's error and recover.
  const spawnAndWait = { toolCalls: [{ id: "s1", name: "spawn", arguments: { task: "read missing.txt", label: "reader", wait: true } }] };
  const subagentReads = { toolCalls: [{ id: "r1", name: "list_dir", arguments: { path: "." } }, { id: "r2", name: "read_file", arguments: { path: "missing.txt" } }] };
  const spawnResult = (i: number): string => {
    const messages = (fake.requests[i]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    return String(messages.at(-1)?.content);
  };

  it("absent (true): a sub-agent stops at its first failing tool and reports its steps and the failure", async () => {
    await withConfig(base());
    fake.enqueue(spawnAndWait, subagentReads, { text: "The reader could not find it." });
    const r = await run(["agent", "-m", "have a sub-agent read it"]);
    expect(r).toMatchObject({ code: 0, out: "The reader could not find it.\n" });
    expect(fake.requests).toHaveLength(3);
    expect(spawnResult(2)).toMatch(/^Sub-agent "reader" failed: Completed steps:\n- list_dir: .+\n\nFailure:\n- read_file: .*missing\.txt/);
  });

  it("false: the sub-agent sees the error and goes on", async () => {
    await withConfig(base({ agents: { defaults: { failOnToolError: false } } }));
    fake.enqueue(spawnAndWait, subagentReads, { text: "missing.txt does not exist." }, { text: "It does not exist." });
    const r = await run(["agent", "-m", "have a sub-agent read it"]);
    expect(r).toMatchObject({ code: 0, out: "It does not exist.\n" });
    expect(fake.requests).toHaveLength(4);
    expect(spawnResult(3)).toBe("missing.txt does not exist.");
  });

  it("true never ends a main turn: the model reads the error and recovers", async () => {
    await withConfig(base({ agents: { defaults: { failOnToolError: true } } }));
    fake.enqueue({ toolCalls: [{ id: "c1", name: "read_file", arguments: { path: "missing.txt" } }] }, { text: "It does not exist." });
    const r = await run(["agent", "-m", "read it"]);
    expect(r).toMatchObject({ code: 0, out: "It does not exist.\n" });
    expect(fake.requests).toHaveLength(2);
  });
});

