/**
 * Issue 22, item 1 (the web UI's side): an MCP server that needs an OAuth login is offered one
 * in `/api/info`; `POST /api/mcp/logins/<server>` answers the authorization URL with the
 * gateway's own `/api/mcp/oauth/callback` as redirect; the browser's redirect (played by
 * fetch, which follows it) stores the tokens and connects the server without a restart, and
 * the next turn calls its tool. Against a real loopback OAuth authorization server guarding a
 * real MCP server. The callback needs no API key but a live `state`; logins that cannot start
 * are refused with the reason.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SECRET_WORD, startOAuthProtectedServer } from "../mcp/servers/oauth-protected-server.js";
import type { OAuthProtectedServer } from "../mcp/servers/oauth-protected-server.js";
import { startGatewayFixture } from "./helpers.js";
import type { FixtureOptions, GatewayFixture } from "./helpers.js";

/** A stdio MCP server (no OAuth to log in to). */
const LOCAL = {
  command: process.execPath,
  args: ["--import", "tsx", join(import.meta.dirname, "..", "mcp", "servers", "test-server.ts")],
  cwd: join(import.meta.dirname, "..", ".."),
};

let fx: GatewayFixture | undefined;
let server: OAuthProtectedServer;

beforeEach(async () => {
  server = await startOAuthProtectedServer();
});
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await server.close();
});

interface Info {
  notices: string[];
  mcpLogins: Array<{ server: string; lastError?: string }>;
}

async function start(options: FixtureOptions = {}): Promise<GatewayFixture> {
  fx = await startGatewayFixture({
    ...options,
    extra: { mcpServers: { secured: { url: server.url }, local: LOCAL }, ...options.extra },
  });
  await fx.runtime.startMcp();
  return fx;
}

function headers(key?: string): Record<string, string> {
  return { "content-type": "application/json", origin: fx!.url, ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

async function info(key?: string): Promise<Info> {
  return (await (await fetch(`${fx!.url}/api/info`, { headers: headers(key) })).json()) as Info;
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("MCP OAuth login from the web UI", { timeout: 60_000 }, () => {
  it("offers the login, takes the browser's redirect on the gateway, and the next turn uses the tool", async () => {
    const { url } = await start();
    const before = await info();
    expect(before.mcpLogins).toEqual([{ server: "secured" }]);
    expect(before.notices.join("\n")).toContain("an admin must run `nanobot mcp login secured`");

    const begin = await fetch(`${url}/api/mcp/logins/secured`, { method: "POST", headers: headers(), body: "{}" });
    expect(begin.status).toBe(200);
    const { authorizationUrl } = (await begin.json()) as { authorizationUrl: string };
    const authorize = new URL(authorizationUrl);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${url}/api/mcp/oauth/callback`);

    // The browser: the authorization server approves and sends it back to the gateway.
    const page = await fetch(authorize);
    expect(page.status).toBe(200);
    expect(page.url.startsWith(`${url}/api/mcp/oauth/callback?`)).toBe(true);
    expect(await page.text()).toContain("nanobot is authorized");

    const after = await until(info, (i) => i.mcpLogins.length === 0, "the server to connect");
    expect(after.notices.join("\n")).not.toContain("secured");
    expect(server.tokenGrants).toEqual(["authorization_code"]);
    const tokenFile = join(fx!.home, "mcp-oauth", "secured.json");
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);

    fx!.fake.enqueue({ toolCalls: [{ id: "call_1", name: "mcp_secured_secret_word", arguments: {} }] }, { text: "it is swordfish" });
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "what is the secret word?" }] }),
    });
    expect(chat.status).toBe(200);
    const second = fx!.fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
    expect(second.messages.filter((m) => m.role === "tool").at(-1)?.content).toContain(SECRET_WORD);
  });

  it("with an API key: starting a login needs the key, the browser's redirect does not", async () => {
    const { url } = await start({ apiKey: "gw-key-web-login-0001" });
    const refused = await fetch(`${url}/api/mcp/logins/secured`, { method: "POST", headers: headers(), body: "{}" });
    expect(refused.status).toBe(401);
    const begin = await fetch(`${url}/api/mcp/logins/secured`, { method: "POST", headers: headers("gw-key-web-login-0001"), body: "{}" });
    const { authorizationUrl } = (await begin.json()) as { authorizationUrl: string };
    const page = await fetch(authorizationUrl);
    expect(page.status).toBe(200);
    await until(() => info("gw-key-web-login-0001"), (i) => i.mcpLogins.length === 0, "the server to connect");
  });

  it("a redirect with an unknown state is refused and stores nothing", async () => {
    const { url } = await start();
    const forged = await fetch(`${url}/api/mcp/oauth/callback?code=stolen&state=made-up`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain("does not belong to a login nanobot is waiting for");
    expect(server.tokenGrants).toEqual([]);
    expect((await info()).mcpLogins).toEqual([{ server: "secured" }]);
  });

  it("an authorization server's refusal fails the login and says why in the bar", async () => {
    const { url } = await start();
    const begin = await fetch(`${url}/api/mcp/logins/secured`, { method: "POST", headers: headers(), body: "{}" });
    const { authorizationUrl } = (await begin.json()) as { authorizationUrl: string };
    const state = new URL(authorizationUrl).searchParams.get("state");
    const denied = await fetch(`${url}/api/mcp/oauth/callback?error=access_denied&error_description=user+said+no&state=${state}`);
    expect(denied.status).toBe(400);
    expect(await denied.text()).toContain("access_denied: user said no");
    const after = await until(info, (i) => i.mcpLogins[0]?.lastError !== undefined, "the failure");
    expect(after.mcpLogins[0]).toEqual({ server: "secured", lastError: "the authorization server refused: access_denied: user said no" });
  });

  it("refuses a login for an unknown server (404) and for a stdio server (400)", async () => {
    const { url } = await start();
    const unknown = await fetch(`${url}/api/mcp/logins/nope`, { method: "POST", headers: headers(), body: "{}" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe("no MCP server named nope in the config");
    const stdio = await fetch(`${url}/api/mcp/logins/local`, { method: "POST", headers: headers(), body: "{}" });
    expect(stdio.status).toBe(400);
    expect(((await stdio.json()) as { error: { message: string } }).error.message).toContain("does not log in with OAuth");
  });
});
