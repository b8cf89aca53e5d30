import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClientManager } from "../../src/mcp/manager.js";
import { selectTools } from "../../src/mcp/select-tools.js";
import type { Tool } from "../../src/tools/tool.js";
import { ctx, referenceSpec, textOfOutput } from "./helpers.js";

describe("stdio server-everything", () => {
  let manager: McpClientManager;
  const tool = (name: string): Tool => {
    const found = manager.tools().find((t) => t.name === name);
    if (!found) throw new Error(`no tool ${name} in ${manager.tools().map((t) => t.name).join(", ")}`);
    return found;
  };

  beforeAll(async () => {
    manager = await McpClientManager.connect({ everything: referenceSpec("everything") }, { sleep: async () => undefined });
  });
  afterAll(async () => {
    await manager.close();
  });

  it("lists the tools added after the handshake, named mcp_<server>_<tool>", () => {
    expect(manager.failures()).toEqual([]);
    const names = manager.tools().map((t) => t.name);
    expect(names).toContain("mcp_everything_echo");
    expect(names).toContain("mcp_everything_get-sum");
    expect(names).toContain("mcp_everything_trigger-long-running-operation");
    expect(names).toContain("mcp_everything_prompt_simple-prompt");
    expect(tool("mcp_everything_get-sum").readOnly).toBe(true);
    expect(tool("mcp_everything_gzip-file-as-resource").readOnly).toBeUndefined();
  });

  it("calls echo", async () => {
    const out = await tool("mcp_everything_echo").execute({ message: "hi there" }, ctx, new AbortController().signal);
    expect(textOfOutput(out)).toBe("Echo: hi there");
  });

  it("calls get-sum", async () => {
    const out = await tool("mcp_everything_get-sum").execute({ a: 2, b: 40 }, ctx, new AbortController().signal);
    expect(textOfOutput(out)).toContain("42");
  });

  it("reports progress of a long-running operation", async () => {
    const progress: [number, number | undefined][] = [];
    const out = await tool("mcp_everything_trigger-long-running-operation").execute(
      { duration: 0.3, steps: 3 },
      { ...ctx, progress: (p, total) => progress.push([p, total]) },
      new AbortController().signal,
    );
    expect(textOfOutput(out)).toContain("Long running operation completed");
    expect(progress).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it("returns a validation failure as a tool error", async () => {
    const out = await tool("mcp_everything_get-sum").execute({ a: "two" }, ctx, new AbortController().signal);
    expect(typeof out === "object" && out.isError).toBe(true);
    expect(textOfOutput(out)).toContain("-32602");
  });

  it("keeps structured content", async () => {
    const out = await tool("mcp_everything_get-structured-content").execute({ location: "Chicago" }, ctx, new AbortController().signal);
    expect(typeof out === "object" && out.structuredContent).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
    expect(typeof out === "object" && out.isError).toBeFalsy();
  });

  it("maps images and resource links to core parts", async () => {
    const image = await tool("mcp_everything_get-tiny-image").execute({}, ctx, new AbortController().signal);
    expect(typeof image === "object" && image.content.some((p) => p.type === "image" && p.mimeType === "image/png" && (p.data?.length ?? 0) > 0)).toBe(true);
    const links = await tool("mcp_everything_get-resource-links").execute({ count: 2 }, ctx, new AbortController().signal);
    expect(typeof links === "object" && links.content.filter((p) => p.type === "resourceLink")).toHaveLength(2);
  });

  it("gets a prompt through the prompt tool", async () => {
    const out = await tool("mcp_everything_prompt_args-prompt").execute({ city: "Lisbon" }, ctx, new AbortController().signal);
    expect(textOfOutput(out)).toContain("Lisbon");
    expect(tool("mcp_everything_prompt_args-prompt").parameters).toMatchObject({ required: ["city"] });
  });

  it("reads a resource through the resource tool", async () => {
    const resourceTool = manager.toolEntries().find((e) => e.kind === "resource" && e.sourceName === "architecture.md");
    expect(resourceTool?.tool.readOnly).toBe(true);
    const out = await resourceTool!.tool.execute({}, ctx, new AbortController().signal);
    expect(typeof out === "object" && out.content[0]).toMatchObject({ type: "resource", uri: "demo://resource/static/document/architecture.md" });
  });

  it("reads a templated resource with its variable as a parameter", async () => {
    const entry = manager.toolEntries().find((e) => e.kind === "resource" && e.sourceName === "Dynamic Text Resource");
    expect(entry?.tool.parameters).toMatchObject({ required: ["resourceId"] });
    const out = await entry!.tool.execute({ resourceId: "7" }, ctx, new AbortController().signal);
    expect(typeof out === "object" && out.content[0]).toMatchObject({ type: "resource", uri: "demo://resource/dynamic/text/7" });
  });

  it("selects tools by server/tool:alias", () => {
    const { tools, unresolved } = selectTools(manager, ["everything/echo:say", "everything/get-sum", "everything/nope", "other"]);
    expect(tools.map((t) => t.name)).toEqual(["say", "mcp_everything_get-sum"]);
    expect(unresolved).toEqual(["everything/nope", "other"]);
    expect(selectTools(manager, ["everything"]).tools.length).toBe(manager.tools().length);
  });
});
