/**
 * Issue 22, item 1, through the built CLI (`bin/nanobot.js`, run `npm run build` first) against a
 * real loopback OAuth authorization server guarding a real MCP server: before a login the
 * server's tools are unavailable and the warning says an admin must run `nanobot mcp login`;
 * `nanobot mcp login` prints the URL and waits on its loopback callback (the test plays the
 * browser by fetching the URL); the token file is 0600; `agent -m` uses the protected tool; an
 * expired access token is refreshed; a 403 `insufficient_scope` asks for a login that requests
 * the wider scope; `nanobot mcp logout` deletes the tokens; the gateway's web
 * UI notices carry the same "an admin must run" message.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import { ADMIN_REPORT, SECRET_WORD, startOAuthProtectedServer } from "../mcp/servers/oauth-protected-server.js";
import type { OAuthProtectedServer } from "../mcp/servers/oauth-protected-server.js";

let root: string;
let home: string;
let fake: FakeLLM;
let server: OAuthProtectedServer;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-mcp-oauth-"));
  home = join(root, "home");
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
  server = await startOAuthProtectedServer();
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-mcp-oauth-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
      mcpServers: { secured: { url: server.url } },
    }),
  );
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
  await rm(root, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ HOME: root, NANOBOT_HOME: home });
const tokenFile = (): string => join(home, "mcp-oauth", "secured.json");
const nanobot = (args: string[]) => runNanobot(args, { cwd: root, env: env(), timeoutMs: 60_000 });

interface StoredFile {
  url: string;
  tokens?: { access_token: string; refresh_token?: string };
}

/** Runs `nanobot mcp login secured`, playing the browser: fetches the printed URL (which redirects to the callback). */
async function login(): Promise<{ authorizeUrl: URL; callback: string; stdout: string; page: Response; pageText: string }> {
  const child = startNanobot(["mcp", "login", "secured"], { cwd: root, env: env() });
  const exited = new Promise<number | null>((resolve) => child.child.once("exit", (code) => resolve(code)));
  try {
    const [, printed] = await child.waitFor(/^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m, 60_000);
    const [, callback] = await child.waitFor(/Waiting for the redirect to (http:\/\/127\.0\.0\.1:\d+\/callback)/);
    const authorizeUrl = new URL(printed as string);
    // The browser: the authorization server redirects to nanobot's loopback callback.
    const page = await fetch(authorizeUrl);
    const pageText = await page.text();
    expect(await exited, child.stderr()).toBe(0);
    return { authorizeUrl, callback: callback as string, stdout: child.stdout(), page, pageText };
  } finally {
    if (child.child.exitCode === null) await child.stop();
  }
}

/** A turn whose model calls the protected tool, then answers with what it returned. */
async function turnUsingTool(tool = "mcp_secured_secret_word"): Promise<{ code: number | null; out: string; err: string; toolResult: string }> {
  const before = fake.requests.length;
  fake.enqueue({ toolCalls: [{ id: "call_1", name: tool, arguments: {} }] }, { text: "done" });
  const r = await nanobot(["agent", "-m", "what is the secret word?"]);
  const second = fake.requests[before + 1]?.body as { messages: Array<{ role: string; content: string }> } | undefined;
  return { code: r.code, out: r.stdout, err: r.stderr, toolResult: second?.messages.filter((m) => m.role === "tool").at(-1)?.content ?? "" };
}

describe("OAuth for a remote MCP server", { timeout: 120_000 }, () => {
  it("without a login: the tools are unavailable, the warning names the command, nothing registers in the background", async () => {
    fake.enqueue({ text: "answered without the secured server" });
    const r = await nanobot(["agent", "-m", "hello"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("answered without the secured server\n");
    expect(r.stderr).toContain("MCP server secured failed to start: needs an OAuth login: an admin must run `nanobot mcp login secured`");
    const tools = (fake.requests.at(-1)?.body as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
    expect(tools.map((t) => t.function.name)).not.toContain("mcp_secured_secret_word");
    expect(server.registrations).toBe(0);
    expect(server.tokenGrants).toEqual([]);
  });

  it("mcp login prints the URL, takes the browser's redirect on its loopback callback, and stores the tokens 0600", async () => {
    const { authorizeUrl: url, callback, stdout, page, pageText } = await login();
    expect(url.searchParams.get("redirect_uri")).toBe(callback);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toBe(server.url);
    expect(page.status).toBe(200);
    expect(pageText).toContain("nanobot is authorized");
    expect(stdout).toMatch(/Logged in to secured \(2 tools\)/);
    expect(server.registrations).toBe(1);
    expect(server.tokenGrants).toEqual(["authorization_code"]);
    expect((await stat(tokenFile())).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, "mcp-oauth"))).mode & 0o077).toBe(0);
    const stored = JSON.parse(await readFile(tokenFile(), "utf8")) as StoredFile;
    expect(stored.url).toBe(server.url);
    expect(stored.tokens?.access_token).toMatch(/^at-/);
  });

  it("agent -m calls the protected server's tool with the stored token", async () => {
    const stored = JSON.parse(await readFile(tokenFile(), "utf8")) as StoredFile;
    const turn = await turnUsingTool();
    expect(turn.code).toBe(0);
    expect(turn.err).not.toContain("failed to start");
    expect(turn.toolResult).toContain(`the secret word is ${SECRET_WORD}`);
    expect(server.acceptedTokens).toContain(stored.tokens?.access_token);
  });

  it("an expired access token is refreshed and the new tokens are stored", async () => {
    const before = JSON.parse(await readFile(tokenFile(), "utf8")) as StoredFile;
    server.expireAccessTokens();
    const turn = await turnUsingTool();
    expect(turn.code).toBe(0);
    expect(turn.toolResult).toContain(SECRET_WORD);
    expect(server.tokenGrants).toEqual(["authorization_code", "refresh_token"]);
    const after = JSON.parse(await readFile(tokenFile(), "utf8")) as StoredFile;
    expect(after.tokens?.access_token).not.toBe(before.tokens?.access_token);
    expect(after.tokens?.refresh_token).not.toBe(before.tokens?.refresh_token);
    expect(server.acceptedTokens.at(-1)).toBe(after.tokens?.access_token);
    expect((await stat(tokenFile())).mode & 0o777).toBe(0o600);
  });

  it("step-up: a 403 insufficient_scope says an admin must log in, and the next login asks for the wider scope", async () => {
    const denied = await turnUsingTool("mcp_secured_admin_report");
    expect(denied.code).toBe(0);
    expect(denied.toolResult).toContain("an admin must run `nanobot mcp login secured`");
    const stored = JSON.parse(await readFile(tokenFile(), "utf8")) as StoredFile & { pendingScope?: string };
    expect(stored.pendingScope?.split(" ")).toContain("admin");

    const { authorizeUrl } = await login();
    expect(authorizeUrl.searchParams.get("scope")?.split(" ")).toEqual(expect.arrayContaining(["tools", "admin"]));
    const allowed = await turnUsingTool("mcp_secured_admin_report");
    expect(allowed.toolResult).toContain(ADMIN_REPORT);
    expect((JSON.parse(await readFile(tokenFile(), "utf8")) as { pendingScope?: string }).pendingScope).toBeUndefined();
  });

  it("mcp logout deletes the tokens; the server needs a login again", async () => {
    const out = await nanobot(["mcp", "logout", "secured"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Logged out of secured: tokens deleted");
    await expect(stat(tokenFile())).rejects.toThrow();
    const again = await nanobot(["mcp", "logout", "secured"]);
    expect(again.stdout).toContain("secured: no stored tokens");
    const list = await nanobot(["mcp", "list"]);
    expect(list.code).toBe(1);
    expect(list.stdout).toContain("needs an OAuth login: an admin must run `nanobot mcp login secured`");
  });

  it("the gateway (no user to log in) says the same in its web UI notices", { timeout: 120_000 }, async () => {
    const registrations = server.registrations;
    const gateway = startNanobot(["gateway", "--port", "0"], { cwd: root, env: env() });
    try {
      const [, url] = await gateway.waitFor(/listening on (http:\/\/\S+)/, 60_000);
      await gateway.waitFor(/MCP server secured failed to start/, 60_000);
      const info = (await (await fetch(`${url}/api/info`)).json()) as { notices: string[] };
      expect(info.notices).toContain("MCP server secured failed to start: needs an OAuth login: an admin must run `nanobot mcp login secured`");
      expect(server.registrations).toBe(registrations);
    } finally {
      await gateway.stop();
    }
  });
});
