/**
 * MCP-UI actions through the gateway, with a real stdio MCP server (test/mcp/servers/
 * mcp-ui-server.ts): a message that is a tool action runs the tool with no model call, then the
 * model is asked once, with the call and its result, and its comment is the answer (as in Go),
 * stored in the session; a prompt action reaches the model as the prompt's text. Through the web UI's `/api/chat` (both turn
 * processors) and through an MCP client calling `chat-with-nanobot` on `/mcp`, whose result
 * also carries the `ui://` resources the turn's tools returned, as Go's chat tool does.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { TURN_PROCESSORS, startGatewayFixture } from "./helpers.js";
import type { FixtureOptions, GatewayFixture } from "./helpers.js";

const SHOP = {
  command: process.execPath,
  args: ["--import", "tsx", join(import.meta.dirname, "..", "mcp", "servers", "mcp-ui-server.ts")],
  cwd: join(import.meta.dirname, "..", ".."),
};

let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function webChat(message: string, session = "default"): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const res = await fetch(`${fx!.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message, session }) });
  expect(res.status).toBe(200);
  return (await res.text())
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event:"))?.slice(6).trim() ?? "";
      const data = lines.find((l) => l.startsWith("data:"))?.slice(5).trim() ?? "{}";
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

const action = (type: string, payload: Record<string, unknown>): string => JSON.stringify({ type, payload });

describe.each(TURN_PROCESSORS)("MCP-UI actions through /api/chat and %s", (_name, makeProcessor) => {
  const start = (options: FixtureOptions = {}): Promise<GatewayFixture> =>
    startGatewayFixture({ extra: { mcpServers: { shop: SHOP } }, ...(makeProcessor ? { makeProcessor } : {}), ...options });

  it("a tool action runs the tool without the model; the model then comments on the result, and all is stored", async () => {
    fx = await start();
    fx.fake.enqueue({ text: "A pear is in your cart." });
    const events = await webChat(action("tool", { toolName: "add_item", params: { item: "pear" } }));
    expect(fx.fake.requests).toHaveLength(1);
    expect(JSON.stringify(fx.fake.requests[0]?.body)).toContain("Added pear; the cart has 1 item(s): pear.");
    const call = events.find((e) => e.event === "tool_call");
    // A Python-style config shows the tool as mcp_shop_add_item; the page's MCP name finds it.
    expect(call?.data).toMatchObject({ call: { name: "mcp_shop_add_item", arguments: { item: "pear" } } });
    expect(events.find((e) => e.event === "tool_result")?.data).toMatchObject({ text: "Added pear; the cart has 1 item(s): pear.", isError: false });
    expect(events.at(-1)).toMatchObject({ event: "done", data: { content: "A pear is in your cart.", stopReason: "completed", toolsUsed: ["mcp_shop_add_item"] } });

    const stored = await fx.runtime.store().loadMessages("web:default");
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(textOf(stored[3]!)).toBe("A pear is in your cart.");

    // The next message is chat again: the model sees the action's call and result in the history.
    fx.fake.enqueue({ text: "You have a pear." });
    await webChat("what is in my cart?");
    const sent = JSON.stringify(fx.fake.requests[1]?.body);
    expect(sent).toContain("Added pear");
    expect(sent).toContain("what is in my cart?");
  });

  it("a tool action naming a tool the agent does not have is an error result the model then reads", async () => {
    fx = await start();
    fx.fake.enqueue({ text: "There is no such tool." });
    const events = await webChat(action("tool", { toolName: "drop_table", params: {} }));
    expect(events.find((e) => e.event === "tool_result")?.data).toMatchObject({ isError: true });
    expect(fx.fake.requests).toHaveLength(1);
    expect(JSON.stringify(fx.fake.requests[0]?.body)).toMatch(/Tool 'drop_table' not found/);
    expect(events.at(-1)?.data.content).toBe("There is no such tool.");
  });

  it("a prompt action's text, or the MCP prompt it names, is the user message the model gets and the store keeps", async () => {
    fx = await start();
    fx.fake.enqueue({ text: "Apple pie." }, { text: "Pear tart." });
    await webChat(action("prompt", { prompt: "Suggest a recipe with apples" }));
    await webChat(action("prompt", { promptName: "recipe", params: { fruit: "pears" } }));
    const lastUser = (i: number): string => {
      const messages = (fx!.fake.requests[i]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
      const user = messages.filter((m) => m.role === "user").at(-1);
      return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content);
    };
    expect(lastUser(0)).toBe("Suggest a recipe with apples");
    expect(lastUser(1)).toBe("Write a short recipe that uses pears.");
    const stored = await fx.runtime.store().loadMessages("web:default");
    expect(stored.filter((m) => m.role === "user").map((m) => textOf(m))).toEqual(["Suggest a recipe with apples", "Write a short recipe that uses pears."]);
  });

  it("a prompt action naming an unknown prompt fails the turn with the reason, without the model", async () => {
    fx = await start();
    const events = await webChat(action("prompt", { promptName: "nope", params: {} }));
    expect(fx.fake.requests).toHaveLength(0);
    expect(String(events.at(-1)?.data.error)).toMatch(/prompt "nope" not found/);
  });
});

describe("MCP-UI actions through chat-with-nanobot on /mcp", () => {
  it("a tool action runs the tool without the model, the model comments; the ui:// page a tool returned comes back with the answer", async () => {
    fx = await startGatewayFixture({ extra: { mcpServers: { shop: SHOP } } });
    const client = new Client({ name: "mcp-ui-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.url}/mcp`)));
    try {
      fx.fake.enqueue({ text: "Your cart is empty." }, { text: "A fig is in." });
      const result = await client.callTool({ name: "chat-with-nanobot", arguments: { prompt: action("tool", { toolName: "shop/show_cart", params: {} }) } });
      expect(fx.fake.requests).toHaveLength(1);
      expect(JSON.stringify(fx.fake.requests[0]?.body)).toContain("The cart has 0 item(s).");
      const content = result.content as Array<{ type: string; text?: string; resource?: { uri: string; mimeType?: string; text?: string } }>;
      expect(content[0]).toEqual({ type: "text", text: "Your cart is empty." });
      const page = content.find((c) => c.type === "resource");
      expect(page?.resource).toMatchObject({ uri: "ui://shop/cart", mimeType: "text/html" });
      expect(page?.resource?.text).toContain("Add apple");

      const added = await client.callTool({ name: "chat-with-nanobot", arguments: { prompt: action("tool", { toolName: "add_item", params: { item: "fig" } }) } });
      expect(added.content).toEqual([{ type: "text", text: "A fig is in." }]);
      expect(fx.fake.requests).toHaveLength(2);
      expect(JSON.stringify(fx.fake.requests[1]?.body)).toContain("Added fig; the cart has 1 item(s): fig.");
    } finally {
      await client.close();
    }
  });
});
