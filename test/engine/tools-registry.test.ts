import { describe, expect, it } from "vitest";
import { ToolRegistry, fixToolSchema, suggestToolName, validateArguments } from "../../src/engine/index.js";
import type { Tool } from "../../src/tools/tool.js";

const tool = (name: string, parameters: Record<string, unknown> = {}): Tool => ({
  name,
  description: name,
  parameters,
  execute: async () => "ok",
});

describe("fixToolSchema", () => {
  it("adds type object and properties, drops required names that are not declared", () => {
    expect(fixToolSchema(undefined)).toEqual({ type: "object", properties: {} });
    expect(fixToolSchema({ properties: { a: { type: "string" } }, required: ["a", "b", 3] })).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
    });
    const input = { type: "object" };
    fixToolSchema(input);
    expect(input).toEqual({ type: "object" });
  });
});

describe("validateArguments", () => {
  const schema = {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1 },
      mode: { enum: ["r", "w"] },
      lines: { type: "array", items: { type: "integer", minimum: 0 }, maxItems: 2 },
      opts: { type: "object", properties: { deep: { type: "boolean" } }, additionalProperties: false },
      size: { type: ["number", "null"], maximum: 10 },
    },
    required: ["path"],
  };

  it("accepts valid arguments", () => {
    expect(validateArguments(schema, { path: "a", mode: "r", lines: [1, 2], opts: { deep: true }, size: null })).toEqual([]);
  });

  it("reports each problem with its path", () => {
    expect(validateArguments(schema, { mode: "x", lines: [1, -1, 3], opts: { deep: 1, extra: 2 }, size: 11 })).toEqual([
      "path: required property is missing",
      'mode: must be one of "r", "w"',
      "lines: must have at most 2 items",
      "lines[1]: must be >= 0",
      "opts.deep: expected boolean, got integer",
      "opts.extra: unknown property",
      "size: must be <= 10",
    ]);
    expect(validateArguments(schema, { path: 5 })).toEqual(["path: expected string, got integer"]);
  });

  it("treats anyOf as any-variant-matches", () => {
    const s = { anyOf: [{ type: "string" }, { type: "integer" }] };
    expect(validateArguments(s, 3)).toEqual([]);
    expect(validateArguments(s, true)).toEqual(["arguments: does not match any allowed shape"]);
  });
});

describe("suggestToolName", () => {
  const known = ["read_file", "write_file", "list_dir", "web_fetch"];
  it("matches case and separator variants", () => {
    expect(suggestToolName("readFile", known)).toBe("read_file");
    expect(suggestToolName("List-Dir", known)).toBe("list_dir");
  });
  it("matches a typo within edit distance 2", () => {
    expect(suggestToolName("web_fecth", known)).toBe("web_fetch");
  });
  it("stays silent when nothing or several are close", () => {
    expect(suggestToolName("delete_everything", known)).toBeUndefined();
    expect(suggestToolName("rad_file", ["read_file", "road_file"])).toBeUndefined();
  });
});

describe("ToolRegistry", () => {
  it("fixes schemas once and caches definitions", () => {
    const registry = new ToolRegistry([tool("a"), tool("b", { type: "object", properties: { x: { type: "string" } } })]);
    const defs = registry.definitions();
    expect(defs.map((d) => d.parameters)).toEqual([{ type: "object", properties: {} }, { type: "object", properties: { x: { type: "string" } } }]);
    expect(registry.definitions()).toBe(defs);
    registry.register(tool("c"));
    expect(registry.definitions()).not.toBe(defs);
  });

  it("explains unknown names", () => {
    const registry = new ToolRegistry([tool("read_file"), tool("exec")]);
    expect(registry.lookup("readFile")).toEqual({ ok: false, error: "Error: Tool 'readFile' not found. Did you mean 'read_file'?" });
    expect(registry.lookup("zzz")).toEqual({ ok: false, error: "Error: Tool 'zzz' not found. Available tools: read_file, exec." });
  });

  it("keeps execute bound to class-based tools", async () => {
    class Counter implements Tool {
      name = "count";
      description = "count";
      parameters = {};
      private n = 41;
      async execute(): Promise<string> {
        this.n++;
        return String(this.n);
      }
    }
    const registry = new ToolRegistry([new Counter()]);
    await expect(registry.get("count")!.execute({}, { callId: "1", workspace: "." }, new AbortController().signal)).resolves.toBe("42");
  });
});
