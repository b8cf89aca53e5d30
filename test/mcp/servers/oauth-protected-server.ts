/**
 * A real loopback OAuth 2.1 authorization server and an MCP server protected by it, on one
 * port: protected resource metadata (RFC 9728), authorization server metadata (RFC 8414),
 * dynamic client registration (RFC 7591), an authorization endpoint that checks the registered
 * redirect and requires PKCE S256, a token endpoint for authorization_code (verifier checked)
 * and refresh_token, and `/mcp` answering 401 with `WWW-Authenticate` until a live token comes.
 * The MCP server has two tools: `secret_word`, and `admin_report`, which needs the `admin` scope
 * (403 `insufficient_scope` naming it, for step-up).
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export const SECRET_WORD = "swordfish";
export const ADMIN_REPORT = "all systems nominal";

export interface OAuthProtectedServer {
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  /** Every token-endpoint request's grant type, in order. */
  tokenGrants: string[];
  /** Clients registered dynamically. */
  registrations: number;
  /** Access tokens stop working (as at expiry); refresh tokens keep working. */
  expireAccessTokens(): void;
  /** Scope requested by each authorization request, in order. */
  authorizationScopes: string[];
  /** Bearer tokens `/mcp` accepted, in order. */
  acceptedTokens: string[];
  close(): Promise<void>;
}

interface Client {
  redirectUris: string[];
}

interface PendingCode {
  clientId: string;
  challenge: string;
  redirectUri: string;
  scope?: string;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

export async function startOAuthProtectedServer(): Promise<OAuthProtectedServer> {
  const clients = new Map<string, Client>();
  const codes = new Map<string, PendingCode>();
  /** Token → its space-separated scope. */
  const accessTokens = new Map<string, string>();
  const refreshTokens = new Map<string, string>();
  const state = { registrations: 0, tokenGrants: [] as string[], acceptedTokens: [] as string[], authorizationScopes: [] as string[] };
  let base = "";

  const issueTokens = (res: ServerResponse, scope: string): void => {
    const access = `at-${randomBytes(8).toString("hex")}`;
    const refresh = `rt-${randomBytes(8).toString("hex")}`;
    accessTokens.set(access, scope);
    refreshTokens.set(refresh, scope);
    json(res, 200, { access_token: access, token_type: "Bearer", expires_in: 3600, refresh_token: refresh, scope });
  };

  const mcpFor = (): McpServer => {
    const server = new McpServer({ name: "oauth-protected", version: "1.0.0" });
    server.registerTool("secret_word", { description: "Tells the secret word (needs OAuth)" }, async () => ({
      content: [{ type: "text", text: `the secret word is ${SECRET_WORD}` }],
    }));
    server.registerTool("admin_report", { description: "The admin report (needs the admin scope)" }, async () => ({
      content: [{ type: "text", text: ADMIN_REPORT }],
    }));
    return server;
  };

  const http = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", base);
      const body = req.method === "POST" ? await readBody(req) : "";
      switch (`${req.method} ${url.pathname}`) {
        case "GET /.well-known/oauth-protected-resource/mcp":
          return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: ["tools"] });
        case "GET /.well-known/oauth-authorization-server":
          return json(res, 200, {
            issuer: base,
            authorization_endpoint: `${base}/authorize`,
            token_endpoint: `${base}/token`,
            registration_endpoint: `${base}/register`,
            response_types_supported: ["code"],
            grant_types_supported: ["authorization_code", "refresh_token"],
            code_challenge_methods_supported: ["S256"],
            token_endpoint_auth_methods_supported: ["none"],
          });
        case "POST /register": {
          const meta = JSON.parse(body) as { redirect_uris?: string[] };
          const clientId = `client-${randomBytes(6).toString("hex")}`;
          clients.set(clientId, { redirectUris: meta.redirect_uris ?? [] });
          state.registrations += 1;
          return json(res, 201, { ...meta, client_id: clientId, token_endpoint_auth_method: "none" });
        }
        case "GET /authorize": {
          const q = url.searchParams;
          const client = clients.get(q.get("client_id") ?? "");
          const redirectUri = q.get("redirect_uri") ?? "";
          if (!client || !client.redirectUris.includes(redirectUri)) return json(res, 400, { error: "invalid_request", error_description: "unknown client or redirect" });
          if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge")) return json(res, 400, { error: "invalid_request", error_description: "PKCE S256 required" });
          state.authorizationScopes.push(q.get("scope") ?? "");
          const code = `code-${randomBytes(8).toString("hex")}`;
          codes.set(code, { clientId: q.get("client_id") ?? "", challenge: q.get("code_challenge") ?? "", redirectUri, ...(q.get("scope") ? { scope: q.get("scope") ?? "" } : {}) });
          const back = new URL(redirectUri);
          back.searchParams.set("code", code);
          if (q.get("state")) back.searchParams.set("state", q.get("state") ?? "");
          res.writeHead(302, { location: back.href }).end();
          return;
        }
        case "POST /token": {
          const form = new URLSearchParams(body);
          const grant = form.get("grant_type") ?? "";
          state.tokenGrants.push(grant);
          if (grant === "authorization_code") {
            const pending = codes.get(form.get("code") ?? "");
            codes.delete(form.get("code") ?? "");
            const verifier = form.get("code_verifier") ?? "";
            const ok =
              pending &&
              pending.clientId === form.get("client_id") &&
              pending.redirectUri === form.get("redirect_uri") &&
              createHash("sha256").update(verifier).digest("base64url") === pending.challenge;
            return ok ? issueTokens(res, pending.scope ?? "tools") : json(res, 400, { error: "invalid_grant" });
          }
          if (grant === "refresh_token") {
            const token = form.get("refresh_token") ?? "";
            const scope = refreshTokens.get(token);
            if (scope === undefined) return json(res, 400, { error: "invalid_grant" });
            refreshTokens.delete(token);
            return issueTokens(res, scope);
          }
          return json(res, 400, { error: "unsupported_grant_type" });
        }
        default:
          break;
      }
      if (url.pathname === "/mcp") {
        const auth = req.headers.authorization ?? "";
        const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
        if (!accessTokens.has(token)) {
          return json(res, 401, { error: "invalid_token" }, { "www-authenticate": `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` });
        }
        const message = (body ? JSON.parse(body) : {}) as { method?: string; params?: { name?: string } };
        const scopes = (accessTokens.get(token) ?? "").split(" ");
        if (message.method === "tools/call" && message.params?.name === "admin_report" && !scopes.includes("admin")) {
          return json(res, 403, { error: "insufficient_scope" }, {
            "www-authenticate": `Bearer error="insufficient_scope", scope="tools admin", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
          });
        }
        state.acceptedTokens.push(token);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        const server = mcpFor();
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body ? (JSON.parse(body) as unknown) : undefined);
        return;
      }
      res.writeHead(404).end();
    })().catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: "server_error", error_description: String(err) });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${base}/mcp`,
    get tokenGrants() {
      return state.tokenGrants;
    },
    get registrations() {
      return state.registrations;
    },
    get acceptedTokens() {
      return state.acceptedTokens;
    },
    get authorizationScopes() {
      return state.authorizationScopes;
    },
    expireAccessTokens: () => accessTokens.clear(),
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
