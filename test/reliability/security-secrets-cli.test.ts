/**
 * Category 5 (secrets), through the built CLI: `bin/nanobot.js` is spawned with a temp
 * NANOBOT_HOME and a config holding test secrets in every place a user puts one — MCP args
 * (`--api-key=…`, `--token …`, a bare `ghp_…`), MCP env and headers, URL userinfo and query
 * tokens, provider and channel keys. `status`, `status --json`, `config check`, `mcp list`
 * (with a server that fails and echoes its argv and env on stderr) and a gateway's log lines
 * are grepped: no secret appears, and the masked forms still say which key is which.
 * Run `npm run build` first: the CLI runs dist/.
 */
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { REPO_ROOT } from "./child-process.js";

const BIN = join(REPO_ROOT, "bin", "nanobot.js");

const SECRETS = {
  provider: "sk-test-SECRETprovider4b7e91d2",
  telegram: "987654:tg-SECRET-channel-token-5a",
  argInline: "argInline-SECRET-3f9a1c",
  argSpaced: "argSpaced-SECRET-8d2e7b",
  argBare: "ghp_SECRETbare0123456789abcdefXYZ",
  argPassword: "argPassword-SECRET-61c0",
  envToken: "envToken-SECRET-0a9b8c",
  envRandom: "a1B2c3D4e5F6g7H8i9J0SECRET",
  urlPassword: "urlPassword-SECRET-7e7e",
  urlToken: "urlToken-SECRET-2b2b",
  urlSig: "urlSig-SECRET-4c4c",
  headerKey: "headerKey-SECRET-9d9d",
  headerBearer: "headerBearer-SECRET-1f1f",
  providerHeader: "providerHeader-SECRET-5b5b",
};

/** A stdio "MCP server" that fails at once, printing what it was started with (as some do). */
const ECHO_AND_FAIL = `
process.stderr.write("started as: " + process.argv.slice(2).join(" ") + "\\n");
process.stderr.write("env: GITHUB_TOKEN=" + process.env.GITHUB_TOKEN + " SESSION_BLOB " + process.env.SESSION_BLOB + "\\n");
process.exit(3);
`;

let root: string;
let home: string;
let configFile: string;
let fake: FakeLLM;
let closedPort: number;

function leaksIn(text: string): string[] {
  return Object.entries(SECRETS)
    .filter(([, secret]) => text.includes(secret))
    .map(([name]) => name);
}

function cliEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: home, NO_COLOR: "1", NANOBOT_RETRY_SCALE: "0" };
}

function runCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args, "--config", configFile], { env: cliEnv(), cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, out: stdout, err: stderr });
    });
  });
}

/** A port nothing listens on: the remote server's connection is refused. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 9;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-secrets-cli-"));
  home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  const script = join(root, "echo-and-fail.mjs");
  await writeFile(script, ECHO_AND_FAIL);
  fake = await startFakeLLM();
  closedPort = await freePort();
  configFile = join(root, "config.json");
  await writeFile(
    configFile,
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: SECRETS.provider, extraHeaders: { "X-Org": SECRETS.providerHeader } } },
      agents: { defaults: { model: "custom/test-model", workspace } },
      channels: { telegram: { enabled: false, token: SECRETS.telegram, allowFrom: ["42"] } },
      tools: {
        mcpServers: {
          echoer: {
            command: process.execPath,
            args: [script, `--api-key=${SECRETS.argInline}`, "--token", SECRETS.argSpaced, SECRETS.argBare, "--password", SECRETS.argPassword, "--verbose"],
            env: { GITHUB_TOKEN: SECRETS.envToken, SESSION_BLOB: SECRETS.envRandom },
            connectTimeout: 10,
          },
          remote: {
            url: `http://alice:${SECRETS.urlPassword}@127.0.0.1:${closedPort}/mcp?token=${SECRETS.urlToken}&sig=${SECRETS.urlSig}&page=2`,
            headers: { "X-Api-Key": SECRETS.headerKey, Authorization: `Bearer ${SECRETS.headerBearer}` },
            connectTimeout: 10,
          },
        },
      },
    }),
  );
}, 60_000);

afterAll(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

describe("secrets never reach what the CLI prints", () => {
  it("`status` masks MCP args, URL userinfo and query tokens, and provider keys — and still names them", async () => {
    const r = await runCli(["status"]);
    expect(r.code, r.err).toBe(0);
    expect(leaksIn(r.out + r.err)).toEqual([]);
    // The masked forms keep the flag, the URL's shape and the key's first and last characters.
    expect(r.out).toContain("--api-key=arg…9a1c");
    expect(r.out).toMatch(/--token arg…2e7b/);
    expect(r.out).toContain("--password arg…61c0");
    expect(r.out).toContain("--verbose");
    expect(r.out).toMatch(/http:\/\/alice:\*\*\*\*@127\.0\.0\.1:\d+\/mcp\?token=\*\*\*\*&sig=\*\*\*\*&page=2/);
    expect(r.out).toContain("key sk-…91d2");
  });

  it("`status --json` holds no secret either", async () => {
    const r = await runCli(["status", "--json"]);
    expect(r.code, r.err).toBe(0);
    expect(leaksIn(r.out + r.err)).toEqual([]);
    const report = JSON.parse(r.out) as { mcpServers: Array<{ name: string; target: string }> };
    expect(report.mcpServers.map((s) => s.name).sort()).toEqual(["echoer", "remote"]);
  });

  it("`config check` masks env and header values, args, URLs and keys, keeping every key name", async () => {
    const r = await runCli(["config", "check"]);
    expect(r.code, r.err).toBe(0);
    expect(leaksIn(r.out + r.err)).toEqual([]);
    const doc = JSON.parse(r.out) as { mcpServers: Record<string, { env?: Record<string, string>; headers?: Record<string, string>; args?: string[] }> };
    const echoer = doc.mcpServers.echoer;
    expect(Object.keys(echoer?.env ?? {})).toEqual(["GITHUB_TOKEN", "SESSION_BLOB"]);
    expect(Object.keys(doc.mcpServers.remote?.headers ?? {})).toEqual(["X-Api-Key", "Authorization"]);
    expect(echoer?.args?.slice(1, 3)).toEqual(["--api-key=arg…9a1c", "--token"]);
  });

  it("`mcp list` reports both servers failed without quoting their secrets (stderr echo, URL)", async () => {
    for (const json of [false, true]) {
      const r = await runCli(["mcp", "list", "--timeout", "10", ...(json ? ["--json"] : [])]);
      expect(r.code, r.out + r.err).toBe(1);
      expect(leaksIn(r.out + r.err)).toEqual([]);
      // The failure is still explained: the server's stderr is there, masked.
      expect(r.out).toContain("started as:");
      expect(r.out).toContain("echoer");
      expect(r.out).toContain("remote");
    }
  }, 120_000);

  it("a gateway's log lines (MCP start failures, a turn at debug level) hold no secret", async () => {
    fake.enqueue({ text: "hello from the gateway turn" });
    const child = spawn(process.execPath, [BIN, "gateway", "--port", "0", "--logs", "--config", configFile], { env: cliEnv(), cwd: root });
    let out = "";
    let err = "";
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /listening on (\S+)/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
      void exited.then(() => reject(new Error(`gateway exited early: ${err}`)));
    });
    try {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
    // The logs were really written: the MCP failures are there, named.
    expect(err).toMatch(/MCP server echoer failed to start/);
    expect(err).toMatch(/MCP server remote failed to start/);
    expect(leaksIn(out + err), err.split("\n").filter((l) => leaksIn(l).length).join("\n")).toEqual([]);
  }, 120_000);
});
