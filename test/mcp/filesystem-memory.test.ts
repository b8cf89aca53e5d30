import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClientManager } from "../../src/mcp/manager.js";
import type { Tool } from "../../src/tools/tool.js";
import { ctx, referenceSpec, textOfOutput } from "./helpers.js";

const signal = new AbortController().signal;

function toolOf(manager: McpClientManager, name: string): Tool {
  const found = manager.tools().find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

describe("server-filesystem and server-memory over stdio", () => {
  let dir: string;
  let outside: string;
  let manager: McpClientManager;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "nanobot-mcp-fs-")));
    outside = await realpath(await mkdtemp(path.join(os.tmpdir(), "nanobot-mcp-outside-")));
    await writeFile(path.join(dir, "hello.txt"), "hello from disk\n");
    await writeFile(path.join(outside, "secret.txt"), "nope\n");
    manager = await McpClientManager.connect({
      fs: referenceSpec("filesystem", [dir]),
      memory: referenceSpec("memory", [], { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") }),
    });
  });
  afterAll(async () => {
    await manager.close();
    await rm(dir, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it("connects both servers", () => {
    expect(manager.failures()).toEqual([]);
    expect(manager.tools().map((t) => t.name)).toEqual(expect.arrayContaining(["mcp_fs_read_text_file", "mcp_memory_read_graph"]));
  });

  it("lists, reads and writes files in the allowed directory", async () => {
    const listed = await toolOf(manager, "mcp_fs_list_directory").execute({ path: dir }, ctx, signal);
    expect(textOfOutput(listed)).toContain("[FILE] hello.txt");
    const read = await toolOf(manager, "mcp_fs_read_text_file").execute({ path: path.join(dir, "hello.txt") }, ctx, signal);
    expect(textOfOutput(read)).toBe("hello from disk\n");
    const written = await toolOf(manager, "mcp_fs_write_file").execute({ path: path.join(dir, "new.txt"), content: "written" }, ctx, signal);
    expect(typeof written === "object" && written.isError).toBeFalsy();
    expect(await readFile(path.join(dir, "new.txt"), "utf8")).toBe("written");
  });

  it("refuses a path outside the allowed directory as a tool error", async () => {
    const out = await toolOf(manager, "mcp_fs_read_text_file").execute({ path: path.join(outside, "secret.txt") }, ctx, signal);
    expect(typeof out === "object" && out.isError).toBe(true);
    expect(textOfOutput(out)).toMatch(/denied|outside allowed/i);
  });

  it("creates entities and reads them back from the graph", async () => {
    const created = await toolOf(manager, "mcp_memory_create_entities").execute(
      { entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }] },
      ctx,
      signal,
    );
    expect(typeof created === "object" && created.isError).toBeFalsy();
    const graph = await toolOf(manager, "mcp_memory_read_graph").execute({}, ctx, signal);
    expect(textOfOutput(graph)).toContain("wrote the first program");
    expect(typeof graph === "object" && graph.structuredContent).toMatchObject({ entities: [{ name: "Ada", entityType: "person" }] });
  });
});
