/**
 * `tools/list` that survives one bad tool. The SDK validates the whole page, so a single tool
 * with an invalid `inputSchema` (a non-object schema, `properties: 42`, none at all) made the
 * server's every tool disappear. On a failed strict listing we ask again with a loose page
 * shape and keep the tools that validate one by one; the rest are logged and skipped.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ListToolsResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { errorMessage } from "../core/errors.js";

const loosePage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

export type ListLog = (level: "warn", msg: string, data?: Record<string, unknown>) => void;

/** One page of tools: strict first, then tool by tool when the strict parse fails. */
export async function listToolsPage(client: Client, cursor: string | undefined, server: string, log?: ListLog): Promise<ListToolsResult> {
  try {
    return await client.listTools(cursor ? { cursor } : undefined);
  } catch (strictError) {
    let page: z.infer<typeof loosePage>;
    try {
      page = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, loosePage);
    } catch {
      throw strictError;
    }
    const tools: McpTool[] = [];
    for (const raw of page.tools) {
      const parsed = ToolSchema.safeParse(raw);
      if (parsed.success) tools.push(parsed.data);
      else {
        const name = raw !== null && typeof raw === "object" && "name" in raw ? String((raw as { name: unknown }).name) : "?";
        log?.("warn", "MCP tool skipped: invalid definition", { server, tool: name, error: errorMessage(parsed.error).slice(0, 300) });
      }
    }
    return page.nextCursor ? { tools, nextCursor: page.nextCursor } : { tools };
  }
}
