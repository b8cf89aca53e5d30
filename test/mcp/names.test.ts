import { describe, expect, it } from "vitest";
import { fitToolName, mcpToolName, parseToolRef, sanitizeName, shortHash } from "../../src/mcp/names.js";
import { detectTransportType, expandVars } from "../../src/mcp/server-spec.js";

describe("tool names", () => {
  it("sanitises to [A-Za-z0-9_-]", () => {
    expect(sanitizeName("my.server/tool name!")).toBe("my_server_tool_name_");
    expect(mcpToolName("everything", "get-sum")).toBe("mcp_everything_get-sum");
    expect(mcpToolName("fs", "read file")).toBe("mcp_fs_read_file");
  });

  it("names prompts and resources with their kind", () => {
    expect(mcpToolName("everything", "simple-prompt", "prompt")).toBe("mcp_everything_prompt_simple-prompt");
    expect(mcpToolName("everything", "architecture.md", "resource")).toBe("mcp_everything_resource_architecture_md");
  });

  it("keeps names of 64 characters unchanged", () => {
    const name = "x".repeat(64);
    expect(fitToolName(name)).toBe(name);
  });

  it("cuts longer names to 64 with a hash of the full name", () => {
    const a = fitToolName(`mcp_server_${"a".repeat(60)}_one`);
    const b = fitToolName(`mcp_server_${"a".repeat(60)}_two`);
    expect(a).toHaveLength(64);
    expect(b).toHaveLength(64);
    expect(a).not.toBe(b);
    expect(a.slice(0, 55)).toBe(`mcp_server_${"a".repeat(44)}`);
    expect(a.endsWith(`_${shortHash(`mcp_server_${"a".repeat(60)}_one`)}`)).toBe(true);
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe("tool references", () => {
  it("parses server, server/tool and server/tool:alias", () => {
    expect(parseToolRef("fs")).toEqual({ server: "fs" });
    expect(parseToolRef("fs/read_file")).toEqual({ server: "fs", tool: "read_file" });
    expect(parseToolRef("fs/read_file:read")).toEqual({ server: "fs", tool: "read_file", alias: "read" });
  });
});

describe("transport detection and ${VAR}", () => {
  it("detects stdio, Streamable HTTP and SSE", () => {
    expect(detectTransportType({ command: "node" })).toBe("stdio");
    expect(detectTransportType({ url: "http://127.0.0.1:1/mcp" })).toBe("http");
    expect(detectTransportType({ url: "http://127.0.0.1:1/sse" })).toBe("sse");
    expect(detectTransportType({ url: "http://127.0.0.1:1/sse/" })).toBe("sse");
    expect(detectTransportType({ url: "http://127.0.0.1:1/sse", type: "http" })).toBe("http");
  });

  it("expands ${VAR} and ${VAR:-default} from the given env", () => {
    expect(expandVars("Bearer ${TOKEN}", { TOKEN: "t1" })).toBe("Bearer t1");
    expect(expandVars("${MISSING:-fallback}/${MISSING}", {})).toBe("fallback/");
  });
});
