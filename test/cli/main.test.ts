import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";

let root: string;
let home: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-cli-"));
  home = join(root, "home");
  await mkdir(home);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(args: string[], opts: { env?: Record<string, string>; cwd?: string; tty?: boolean } = {}): Promise<Run> {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s), isTTY: opts.tty },
    stderr: { write: (s: string) => (err += s), isTTY: opts.tty },
    env: { HOME: home, NANOBOT_HOME: join(root, "nb"), ...opts.env },
    cwd: opts.cwd ?? root,
  };
  const code = await main(["node", "nanobot", ...args], io);
  return { code, out, err };
}

const pkgVersion = async () =>
  (JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

describe("nanobot --version and --help", () => {
  it("prints the package version and exits 0", async () => {
    const r = await run(["--version"]);
    expect(r).toEqual({ code: 0, out: `${await pkgVersion()}\n`, err: "" });
  });

  it("has --help on every command", async () => {
    for (const args of [["--help"], ["config", "--help"], ["config", "check", "--help"], ["config", "schema", "--help"], ["status", "--help"]]) {
      const r = await run(args);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^Usage: nanobot/);
    }
    expect((await run(["--help"])).out).toContain("--config <path>");
  });
});

describe("usage errors exit with 2", () => {
  it("unknown command", async () => {
    const r = await run(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("error: unknown command 'frobnicate'");
  });

  it("unknown option", async () => {
    const r = await run(["status", "--bogus"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("error: unknown option '--bogus'");
  });

  it("missing option argument", async () => {
    const r = await run(["status", "--config"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("argument missing");
  });
});

describe("nanobot config check", () => {
  it("prints the resolved config with secrets masked and warnings on stderr", async () => {
    await writeFile(
      join(root, "nanobot.yaml"),
      "providers:\n  custom:\n    apiBase: http://127.0.0.1:8000/v1\n    apiKey: ${MY_KEY}\nagents:\n  defaults:\n    model: custom/m\n    sparkle: true\n",
    );
    const r = await run(["config", "check"], { env: { MY_KEY: "sk-local-secret-value-7777" } });
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.out) as { providers: { custom: { apiKey: string } }; agents: { defaults: { model: string; maxTokens: number } } };
    expect(printed.providers.custom.apiKey).toBe("sk-…7777");
    expect(printed.agents.defaults).toMatchObject({ model: "custom/m", maxTokens: 8192 });
    expect(r.out).not.toContain("sk-local-secret-value-7777");
    expect(r.err).toContain("warning: nanobot.yaml: unknown key agents.defaults.sparkle (ignored)");
    expect(r.err).toContain(`ok: ${join(root, "nanobot.yaml")} (1 warning)`);
  });

  it("exits 2 with the one-line message on an invalid file", async () => {
    await writeFile(join(root, "config.json"), '{"agents": {"defaults": {"maxTokens": "lots"}}}');
    const r = await run(["config", "check", "--config", "config.json"]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: 'error: config.json: agents.defaults.maxTokens: expected a positive integer, got "lots"\n',
    });
  });

  it("accepts the global --config before the command too", async () => {
    await writeFile(join(root, "other.json"), '{"agents": {"defaults": {"model": "x/from-flag"}}}');
    const r = await run(["--config", "other.json", "config", "check"]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { agents: { defaults: { model: string } } }).agents.defaults.model).toBe("x/from-flag");
  });
});

describe("nanobot config schema", () => {
  it("prints a JSON Schema with properties.agents", async () => {
    const r = await run(["config", "schema"]);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.out) as { properties: Record<string, unknown> };
    expect(schema.properties.agents).toBeDefined();
    expect(schema.properties.mcpServers).toBeDefined();
  });
});

describe("nanobot status", () => {
  it("reports defaults when there is no config file", async () => {
    const r = await run(["status"], { env: { OPENAI_API_KEY: "sk-openai-abcdefgh5678" } });
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    expect(r.out).toContain("config       none (defaults)\n");
    expect(r.out).toContain(`home         ${join(root, "nb")}\n`);
    expect(r.out).toContain(`workspace    ${join(root, "nb", "workspace")}\n`);
    expect(r.out).toContain("model        not set\n");
    expect(r.out).toContain("providers    openai (key sk-…5678, from env)\n");
    expect(r.out).toContain("mcp servers  none\n");
    expect(r.out).not.toContain("\u001b["); // not a TTY: no colours
  });

  it("summarises a Go-style project as JSON", async () => {
    await writeFile(
      join(root, "nanobot.yaml"),
      [
        "agents:",
        "  helper:",
        "    model: gpt-4.1",
        "    default: true",
        "mcpServers:",
        "  fs:",
        "    command: npx",
        "    args: [server-fs, /tmp]",
        "  web:",
        "    url: http://127.0.0.1:9/mcp",
        "llmProviders:",
        "  local:",
        "    dialect: OpenAIChatCompletions",
        "    baseURL: http://127.0.0.1:11434/v1",
        "channels:",
        "  telegram:",
        "    enabled: true",
        "    token: 123:abc",
        "",
      ].join("\n"),
    );
    const r = await run(["status", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      config: join(root, "nanobot.yaml"),
      configSource: "cwd",
      model: "gpt-4.1",
      defaultAgent: "helper",
      providers: [{ name: "local", apiBase: "http://127.0.0.1:11434/v1", dialect: "OpenAIChatCompletions" }],
      mcpServers: [
        { name: "fs", transport: "stdio", target: "npx server-fs /tmp" },
        { name: "web", transport: "http", target: "http://127.0.0.1:9/mcp" },
      ],
      agents: ["helper"],
      channels: ["telegram"],
    });
  });

  it("uses colours only on a TTY", async () => {
    const r = await run(["status"], { tty: true });
    expect(r.out).toContain("\u001b[");
  });

  it("exits 2 on a missing environment variable", async () => {
    await writeFile(join(root, "nanobot.yaml"), "gateway:\n  apiKey: ${GW_KEY}\n");
    const r = await run(["status"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "error: nanobot.yaml: gateway.apiKey: environment variable GW_KEY is not set (set it, or write ${GW_KEY:-default})\n",
    );
  });
});
