import { describe, expect, it } from "vitest";
import { mapCallToolResult, promptText } from "../../src/mcp/result-mapping.js";

describe("mapping MCP results to core parts", () => {
  it("renders structuredContent as JSON text when there is no text", () => {
    expect(mapCallToolResult({ content: [], structuredContent: { a: 1 } })).toEqual({
      content: [{ type: "text", text: '{"a":1}' }],
      structuredContent: { a: 1 },
    });
  });

  it("keeps text as is next to structuredContent", () => {
    expect(mapCallToolResult({ content: [{ type: "text", text: "sunny" }], structuredContent: { t: 20 } }).content).toEqual([
      { type: "text", text: "sunny" },
    ]);
  });

  it("maps images, embedded resources, UI resources and links; isError becomes a tool error", () => {
    const out = mapCallToolResult({
      isError: true,
      content: [
        { type: "image", data: "AAA=", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "A" } },
        { type: "resource", resource: { uri: "ui://widget/1", mimeType: "text/html", text: "<p>hi</p>" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "Qg==" } },
        { type: "resource_link", uri: "file:///c.md", name: "c.md", mimeType: "text/markdown" },
      ],
    });
    expect(out).toEqual({
      isError: true,
      content: [
        { type: "image", mimeType: "image/png", data: "AAA=" },
        { type: "resource", uri: "file:///a.txt", mimeType: "text/plain", text: "A" },
        { type: "ui", uri: "ui://widget/1", mimeType: "text/html", content: "<p>hi</p>" },
        { type: "resource", uri: "file:///b.bin", blob: "Qg==" },
        { type: "resourceLink", uri: "file:///c.md", name: "c.md", mimeType: "text/markdown" },
      ],
    });
  });

  it("joins a prompt's text messages", () => {
    expect(
      promptText({
        messages: [
          { role: "user", content: { type: "text", text: "one" } },
          { role: "assistant", content: { type: "image", data: "AA==", mimeType: "image/png" } },
          { role: "user", content: { type: "resource", resource: { uri: "x://y", text: "two" } } },
        ],
      }),
    ).toBe("one\n\ntwo");
  });
});
