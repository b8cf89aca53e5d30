import { describe, expect, it } from "vitest";
import { listServers } from "../../src/mcp/list-servers.js";
import { testServerSpec } from "./helpers.js";

describe("listServers (nanobot mcp list)", () => {
  it("lists each server's tools as the model sees them, or why it failed", async () => {
    const listed = await listServers({
      t: { ...testServerSpec(), enabledTools: ["whoami", "hang"] },
      gone: { url: "http://127.0.0.1:9/mcp" },
    });
    expect(listed).toEqual([
      {
        server: "t",
        tools: [
          { name: "mcp_t_hang", description: "Never answers until cancelled", sourceTool: "hang", kind: "tool" },
          { name: "mcp_t_whoami", description: "Returns the server pid", sourceTool: "whoami", kind: "tool" },
        ],
      },
      { server: "gone", tools: [], error: "cannot connect at http://127.0.0.1:9/mcp: bad port" },
    ]);
  });
});
