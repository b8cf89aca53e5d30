/**
 * Issue 22, item 1, in headless Chromium: the web UI offers a "Log in" button for a remote MCP
 * server that needs OAuth; pressing it opens the authorization server's page in a new tab (and
 * leaves a link), the authorization server sends that tab back to the gateway's callback, and
 * the chat page notices the server connected — no restart, no CLI. Against a real loopback OAuth
 * authorization server guarding a real MCP server.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { build } from "vite";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";
import { startOAuthProtectedServer } from "../mcp/servers/oauth-protected-server.js";
import type { OAuthProtectedServer } from "../mcp/servers/oauth-protected-server.js";
import { needs } from "../support/requires.js";

const browserBinary = needs.chromium();

let webRoot: string | undefined;
let browser: Browser | undefined;
let fx: GatewayFixture | undefined;
let server: OAuthProtectedServer | undefined;

beforeAll(async () => {
  if (!browserBinary.available) return;
  webRoot = await mkdtemp(join(tmpdir(), "nanobot-web-dist-"));
  await build({ configFile: resolve("web/vite.config.ts"), logLevel: "silent", build: { outDir: webRoot, emptyOutDir: true } });
  browser = await chromium.launch({
    executablePath: browserBinary.path,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  if (webRoot !== undefined) await rm(webRoot, { recursive: true, force: true });
});
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await server?.close();
  server = undefined;
});

browserBinary.describe("MCP OAuth login in the web UI (headless Chromium)", () => {
  it("the Log in button opens the authorization page; its redirect connects the server and the bar goes away", async () => {
    server = await startOAuthProtectedServer();
    fx = await startGatewayFixture({ webRoot, extra: { mcpServers: { secured: { url: server.url } } } });
    await fx.runtime.startMcp();
    if (browser === undefined) throw new Error("Chromium did not start (see beforeAll)");
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(fx.url);
      const bar = page.getByTestId("mcp-logins");
      await bar.getByText("MCP server secured needs you to log in.").waitFor();
      // The bar says it; the notice does not repeat the CLI-only advice.
      expect(await page.getByTestId("notice").isHidden()).toBe(true);

      const popup = context.waitForEvent("page");
      await bar.getByTestId("mcp-login-button").click();
      const tab = await popup;
      await tab.waitForURL(/\/api\/mcp\/oauth\/callback\?/);
      expect(await tab.locator("h1").textContent()).toBe("nanobot is authorized");
      expect(tab.url().startsWith(`${fx.url}/api/mcp/oauth/callback?`)).toBe(true);

      await bar.waitFor({ state: "hidden", timeout: 20_000 });
      expect(server.tokenGrants).toEqual(["authorization_code"]);
      expect(fx.runtime.mcpStartFailures()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
