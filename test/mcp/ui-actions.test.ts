/**
 * Recognising MCP-UI actions in a message and finding the turn's tool a page names. The turn
 * path itself is tested through the gateway (test/gateway/mcp-ui-actions.test.ts) and the web
 * UI in Chromium (test/webui/mcp-ui.test.ts).
 */
import { describe, expect, it } from "vitest";
import { parseUiAction, resolveActionTool } from "../../src/mcp/ui-actions.js";
import type { McpToolEntry } from "../../src/mcp/tool-adapters.js";

describe("parseUiAction", () => {
  it("recognises tool and prompt actions as an MCP-UI page posts them", () => {
    expect(parseUiAction(' {"type":"tool","payload":{"toolName":"echo","params":{"message":"x"}},"messageId":"m1"} ')).toEqual({
      type: "tool",
      toolName: "echo",
      params: { message: "x" },
    });
    expect(parseUiAction('{"type":"tool","payload":{"toolName":"echo"}}')).toEqual({ type: "tool", toolName: "echo", params: {} });
    expect(parseUiAction('{"type":"prompt","payload":{"prompt":"Summarise"}}')).toEqual({ type: "prompt", prompt: "Summarise" });
    expect(parseUiAction('{"type":"prompt","payload":{"promptName":"recipe","params":{"fruit":"fig","n":2}}}')).toEqual({
      type: "prompt",
      promptName: "recipe",
      params: { fruit: "fig", n: "2" },
    });
    const rendered = { type: "prompt", payload: { promptName: "recipe", renderedMessages: [{ role: "user", content: { type: "text", text: "As sent" } }] } };
    expect(parseUiAction(JSON.stringify(rendered))).toEqual({ type: "prompt", renderedText: "As sent" });
  });

  it("leaves chat, broken JSON and the other action types (intent, notify, link) as text, as Go does", () => {
    for (const text of ["hello {there}", "{not json}", '{"type":"tool","payload":{}}', '{"type":"tool"}', '{"type":"intent","payload":{"intent":"x"}}', '{"type":"notify","payload":{"message":"hi"}}', '{"type":"link","payload":{"url":"https://example.com"}}', '["tool"]']) {
      expect(parseUiAction(text)).toBeUndefined();
    }
  });
});

describe("resolveActionTool", () => {
  const noop = { description: "", parameters: { type: "object" }, execute: () => Promise.resolve("") };
  const entry = (server: string, sourceName: string, shown: string): McpToolEntry => ({
    tool: { name: shown, ...noop },
    server,
    kind: "tool",
    sourceName,
    exposedName: sourceName,
  });
  const entries = [entry("shop", "add_item", "mcp_shop_add_item"), entry("shop", "show", "show"), entry("crm", "show", "show")];

  it("finds the turn's name for a page's MCP name, server/name, or the name the model sees", () => {
    expect(resolveActionTool("add_item", [{ name: "mcp_shop_add_item" }], entries)).toBe("mcp_shop_add_item");
    expect(resolveActionTool("shop/add_item", [{ name: "mcp_shop_add_item" }], entries)).toBe("mcp_shop_add_item");
    expect(resolveActionTool("read_file", [{ name: "read_file" }], [])).toBe("read_file");
    // Go naming on a clash: two servers' `show` became shop_show and crm_show.
    expect(resolveActionTool("crm/show", [{ name: "shop_show" }, { name: "crm_show" }], entries)).toBe("crm_show");
  });

  it("finds nothing the agent is not offered", () => {
    expect(resolveActionTool("add_item", [{ name: "read_file" }], entries)).toBeUndefined();
    expect(resolveActionTool("exec", [{ name: "read_file" }], entries)).toBeUndefined();
  });
});
