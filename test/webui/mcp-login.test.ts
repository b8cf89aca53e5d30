/**
 * Issue 22, item 1, in headless Chromium: the web UI offers a "Log in" button for a remote MCP
 * server that needs OAuth; pressing it opens the authorization server's page in a new tab (and
 * leaves a link), the authorization server sends that tab back to the gateway's callback, and
 * the chat page notices the server connected — no restart, no CLI. Against a real loopback OAuth
 * authorization server guarding a real MCP server.
 */
import { afterEach, expect, it } from "vitest";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";
import { startOAuthProtectedServer } from "../mcp/servers/oauth-protected-server.js";
import type { OAuthProtectedServer } from "../mcp/servers/oauth-protected-server.js";
import { useWebUiBrowser } from "./browser.js";

const web = useWebUiBrowser();
let fx: GatewayFixture | undefined;
let server: OAuthProtectedServer | undefined;

afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await server?.close();
  server = undefined;
});

web.describe("MCP OAuth login in the web UI (headless Chromium)", () => {
  it("the Log in button opens the authorization page; its redirect connects the server and the bar goes away", async () => {
    server = await startOAuthProtectedServer();
    fx = await startGatewayFixture({ webRoot: web.webRoot(), extra: { mcpServers: { secured: { url: server.url } } } });
    await fx.runtime.startMcp();
    const context = await web.browser().newContext();
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
