/**
 * MCP-UI in the web UI, in headless Chromium, with a real stdio MCP server
 * (test/mcp/servers/mcp-ui-server.ts) whose `show_cart` tool returns a `ui://` HTML page: the
 * page renders in a sandboxed frame (scripts, no same-origin), its "Add apple" button posts a
 * tool action that runs the tool with no model call, the result shows in the chat and goes
 * back to the page, and the model then comments on it (as in Go); its prompt button sends the
 * prompt's text to the model; a reload renders the stored page again. A remote-dom resource
 * (`show_widget`) shows a "not supported" placeholder in its place.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, expect, it } from "vitest";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";
import { ARTIFACTS, useWebUiBrowser } from "./browser.js";

const web = useWebUiBrowser();
const SHOP = {
  command: process.execPath,
  args: ["--import", "tsx", join(import.meta.dirname, "..", "mcp", "servers", "mcp-ui-server.ts")],
  cwd: join(import.meta.dirname, "..", ".."),
};
let fx: GatewayFixture | undefined;
let page: Page | undefined;

afterEach(async () => {
  await page?.close();
  page = undefined;
  await fx?.close();
  fx = undefined;
});

/** The last user message the model got in request `i`, as text. */
function lastUserText(i: number): string {
  const messages = (fx?.fake.requests[i]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  const user = messages.filter((m) => m.role === "user").at(-1);
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content);
}

web.describe("MCP-UI in the web UI (headless Chromium)", () => {
  it("renders a tool's ui:// page sandboxed; its buttons run a tool without the model and send a prompt", async () => {
    fx = await startGatewayFixture({ webRoot: web.webRoot(), extra: { mcpServers: { shop: SHOP } } });
    const p = (page = await web.browser().newPage({ viewport: { width: 1200, height: 900 } }));
    await p.goto(fx.url);
    fx.fake.enqueue({ toolCalls: [{ id: "call_1", name: "mcp_shop_show_cart", arguments: {} }] }, { text: "Here is your cart." });
    await p.getByTestId("input").fill("show my cart");
    await p.getByTestId("send").click();
    await p.getByText("Here is your cart.").waitFor();
    await p.getByTestId("send").waitFor({ state: "visible" });

    const frameElement = p.getByTestId("ui-resource");
    expect(await frameElement.getAttribute("sandbox")).toBe("allow-scripts");
    expect(await frameElement.getAttribute("data-uri")).toBe("ui://shop/cart");
    const frame = p.frameLocator("[data-testid=ui-resource]");
    await frame.locator("#items", { hasText: "(empty)" }).waitFor();
    // An opaque origin: the page cannot reach this page's DOM (nor its storage or API key).
    expect(await frame.locator("#origin").textContent()).toBe("origin=null parent=blocked");
    expect(fx.fake.requests).toHaveLength(2);

    // The page's button posts {type: "tool", payload: {toolName: "add_item", params: {item: "apple"}}}:
    // the tool runs without a model call, then the model comments on its result (Go's order).
    fx.fake.enqueue({ text: "An apple is in your cart." });
    await frame.locator("#add").click();
    await p.getByTestId("user-message").filter({ hasText: "▸ add_item" }).waitFor();
    const reply = p.getByTestId("assistant-message").last();
    await reply.locator(".markdown", { hasText: "An apple is in your cart." }).waitFor();
    await p.getByTestId("send").waitFor({ state: "visible" });
    expect(await reply.getByTestId("tool-call").locator(".tool-name").textContent()).toBe("mcp_shop_add_item");
    // The tool's result went back to the page as the answer to its message.
    await expect.poll(() => frame.locator("#response").textContent()).toContain("Added apple; the cart has 1 item(s): apple.");
    expect(fx.fake.requests).toHaveLength(3);
    expect(JSON.stringify(fx.fake.requests[2]?.body)).toContain("Added apple; the cart has 1 item(s): apple.");
    await p.screenshot({ path: join(ARTIFACTS, "webui-mcp-ui-tool-action.png"), fullPage: true });

    // A prompt action: its text is the user message the model answers.
    fx.fake.enqueue({ text: "Apple crumble." });
    await frame.locator("#ask").click();
    await p.getByText("Apple crumble.").waitFor();
    expect(fx.fake.requests).toHaveLength(4);
    expect(lastUserText(3)).toBe("Suggest a recipe with apples");
    await p.getByTestId("send").waitFor({ state: "visible" });

    // The stored conversation renders the page again, and its buttons still work.
    await p.reload();
    await p.frameLocator("[data-testid=ui-resource]").locator("#items", { hasText: "(empty)" }).waitFor();
    expect(await p.getByTestId("ui-resource").count()).toBe(1);
    await p.locator(".markdown", { hasText: "An apple is in your cart." }).waitFor();
  });

  it("a remote-dom resource is not rendered: a placeholder in its place says this UI kind is not supported", async () => {
    fx = await startGatewayFixture({ webRoot: web.webRoot(), extra: { mcpServers: { shop: SHOP } } });
    const p = (page = await web.browser().newPage({ viewport: { width: 1200, height: 900 } }));
    await p.goto(fx.url);
    fx.fake.enqueue({ toolCalls: [{ id: "call_w", name: "mcp_shop_show_widget", arguments: {} }] }, { text: "Here is the widget." });
    await p.getByTestId("input").fill("show the widget");
    await p.getByTestId("send").click();
    await p.getByText("Here is the widget.").waitFor();
    const note = p.getByTestId("ui-unsupported");
    await note.waitFor();
    expect(await note.getAttribute("data-uri")).toBe("ui://shop/widget");
    expect(await note.textContent()).toContain("this UI kind is not supported: remote-dom components (application/vnd.mcp-ui.remote-dom+javascript; framework=react)");
    expect(await p.getByTestId("ui-resource").count()).toBe(0);
    await p.screenshot({ path: join(ARTIFACTS, "webui-mcp-ui-remote-dom.png"), fullPage: true });
  });
});
