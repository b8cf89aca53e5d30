/**
 * `nanobot mcp login <server>`: authorises nanobot at a remote MCP server. A loopback callback is
 * started, the server is connected with an authorizer that prints the authorization URL and waits
 * for the browser's redirect, and the tokens land in the server's token file. Any scope a server
 * asked for while nobody could log in (a 403 step-up) is requested too.
 */
import { McpClientManager } from "../manager.js";
import { serverUrl, usesOAuth } from "../server-spec.js";
import type { McpServerSpec } from "../types.js";
import { startLoopbackCallback } from "./loopback.js";
import type { OAuthCallback } from "./loopback.js";
import { OAuthStore, oauthDirFor } from "./token-store.js";

export interface LoginOptions {
  home: string;
  env: Record<string, string | undefined>;
  /** Seconds to wait for the user (default 300). */
  timeoutSeconds?: number;
  /** Shown the URL to open (the CLI prints it; the gateway hands it to the web UI). */
  onAuthorizationUrl(url: URL, redirectUrl: string): void;
  /**
   * Where the browser comes back with the code. Default: a loopback listener (RFC 8252) for the
   * CLI; the gateway passes its own `/api/mcp/oauth/callback` route instead.
   */
  callback?: OAuthCallback;
}

export interface LoginResult {
  /** Tokens were obtained (false: the server let nanobot in without asking). */
  authorized: boolean;
  tools: number;
  tokenFile?: string;
}

function portOf(url: string | undefined): number | undefined {
  if (!url) return undefined;
  try {
    const port = Number(new URL(url).port);
    return port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

export async function loginToServer(server: string, spec: McpServerSpec, options: LoginOptions): Promise<LoginResult> {
  const url = serverUrl(spec, options.env);
  if (!url || !usesOAuth(spec)) throw new Error(`MCP server '${server}' is not a remote server using OAuth (it has a command, or an Authorization header)`);
  if (spec.oauth?.grant === "client_credentials") throw new Error(`MCP server '${server}' uses the client_credentials grant: nanobot gets its tokens without a login`);
  const dir = oauthDirFor(options.home);
  const store = new OAuthStore(dir, server, url);
  const stored = await store.read();
  // The registered redirect's port again when it is free, so a dynamically registered client stays valid.
  const preferred = spec.oauth?.callbackPort ?? portOf(stored.redirectUrl) ?? 0;
  const callback =
    options.callback ??
    (await startLoopbackCallback(preferred).catch(async (err: unknown) => {
      if (spec.oauth?.callbackPort) throw new Error(`cannot listen on 127.0.0.1:${spec.oauth.callbackPort} (mcpServers.${server}.oauth.callbackPort)`, { cause: err });
      return startLoopbackCallback(0);
    }));
  try {
    await store.update((s) => {
      // A fresh authorization; a client registered for another redirect registers again.
      const { tokens: _t, expiresAt: _e, codeVerifier: _v, ...rest } = s;
      const keepClient = spec.oauth?.clientId !== undefined || rest.redirectUrl === callback.redirectUrl;
      return { ...rest, ...(keepClient ? {} : { client: undefined }), redirectUrl: callback.redirectUrl };
    });
    const pendingScope = stored.pendingScope;
    const manager = new McpClientManager(
      { [server]: { ...spec, connectTimeout: options.timeoutSeconds ?? 300 } },
      {
        env: options.env,
        oauthDir: dir,
        oauthRedirectUrl: callback.redirectUrl,
        oauthAuthorize: async (_server, authorizationUrl) => {
          if (pendingScope) {
            const scopes = new Set([...(authorizationUrl.searchParams.get("scope") ?? "").split(" "), ...pendingScope.split(" ")].filter(Boolean));
            authorizationUrl.searchParams.set("scope", [...scopes].join(" "));
          }
          const code = callback.waitForCode(authorizationUrl.searchParams.get("state"));
          options.onAuthorizationUrl(authorizationUrl, callback.redirectUrl);
          return code;
        },
      },
    );
    try {
      const failures = await manager.start();
      if (failures.length > 0) throw new Error(failures.map((f) => f.reason).join("; "));
      const after = await new OAuthStore(dir, server, url).read();
      return {
        authorized: after.tokens !== undefined,
        tools: manager.connection(server)?.listing.tools.length ?? 0,
        ...(store.file ? { tokenFile: store.file } : {}),
      };
    } finally {
      await manager.close();
    }
  } finally {
    await callback.close();
  }
}

/** `nanobot mcp logout <server>`: deletes the server's token file. Resolves false when there was none. */
export async function logoutFromServer(server: string, spec: McpServerSpec | undefined, options: { home: string; env: Record<string, string | undefined> }): Promise<boolean> {
  const url = spec ? (serverUrl(spec, options.env) ?? "") : "";
  return new OAuthStore(oauthDirFor(options.home), server, url).remove();
}
