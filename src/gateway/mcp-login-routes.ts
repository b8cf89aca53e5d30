/**
 * The web UI's MCP logins: `GET /api/mcp/logins` (servers that need one), `POST
 * /api/mcp/logins/:server` (starts one; answers the authorization URL to open) and `GET
 * /api/mcp/oauth/callback` (where the authorization server sends the browser back). The callback
 * is a top-level navigation that carries no API key: the unguessable, single-use OAuth `state`
 * of a login in progress is what admits it.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { WebLoginRefused } from "../mcp/oauth/web-logins.js";
import type { McpWebLogins } from "../mcp/oauth/web-logins.js";
import { ApiError } from "./errors.js";

export const MCP_OAUTH_CALLBACK_PATH = "/api/mcp/oauth/callback";

/** The gateway's own origin as the browser sees it (checked by the browser guard before this runs). */
function browserOrigin(c: Context): string {
  return c.req.header("origin") ?? new URL(c.req.url).origin;
}

export function mcpLoginRoutes(logins: McpWebLogins): Hono {
  const app = new Hono();
  app.get("/mcp/logins", (c) => c.json({ logins: logins.pending() }));
  app.post("/mcp/logins/:server", async (c) => {
    const server = c.req.param("server");
    try {
      return c.json(await logins.begin(server, `${browserOrigin(c)}${MCP_OAUTH_CALLBACK_PATH}`));
    } catch (err) {
      if (err instanceof WebLoginRefused) throw new ApiError(err.status, err.message, "invalid_request_error", err.status === 404 ? "not_found" : "invalid_request");
      throw new ApiError(502, `MCP login for ${server} failed: ${err instanceof Error ? err.message : String(err)}`, "upstream_error", "mcp_login_failed");
    }
  });
  app.get("/mcp/oauth/callback", (c) => {
    const { status, html } = logins.redirect(new URL(c.req.url).searchParams);
    return c.html(html, status);
  });
  return app;
}
