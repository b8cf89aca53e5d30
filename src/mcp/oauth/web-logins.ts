/**
 * MCP OAuth logins given from the web UI. The CLI's `nanobot mcp login` waits on a loopback
 * listener; a gateway's user is at a browser that may be on another machine, so the redirect
 * comes back to the gateway itself (`/api/mcp/oauth/callback`), matched to its login by the
 * OAuth `state`. Once the tokens are stored the server is connected again, and its tools are
 * there for the next turn — no restart.
 */
import { serverUrl, usesOAuth } from "../server-spec.js";
import type { McpServerSpec } from "../types.js";
import { RedirectWaiters } from "./redirect-waiters.js";
import type { RedirectAnswer } from "./redirect-waiters.js";

export interface WebLoginsDeps {
  home: string;
  env: Record<string, string | undefined>;
  /** The configured MCP servers. */
  servers(): Record<string, McpServerSpec>;
  /** Servers that could not connect because they need a login. */
  needed(): string[];
  /** Connects the server again with its new tokens; resolves with the failure, if any. */
  reconnect(server: string): Promise<string | undefined>;
  log(level: "info" | "warn", msg: string, data?: Record<string, unknown>): void;
  /** How long a login waits for the browser (default 10 minutes). */
  timeoutMs?: number;
}

export type BeginResult = { authorizationUrl: string } | { connected: true };

/** A login that cannot start: an unknown server, or one that does not use OAuth. */
export class WebLoginRefused extends Error {
  constructor(message: string, readonly status: 400 | 404) {
    super(message);
    this.name = "WebLoginRefused";
  }
}

export class McpWebLogins {
  private readonly waiters = new RedirectWaiters();
  /** Servers with a login in progress, and the error of the last one that failed. */
  private readonly inProgress = new Set<string>();
  private readonly failed = new Map<string, string>();

  constructor(private readonly deps: WebLoginsDeps) {}

  /** Servers the web UI offers a login for (with the last failure, if a login was tried). */
  pending(): Array<{ server: string; lastError?: string }> {
    return this.deps.needed().map((server) => {
      const lastError = this.failed.get(server);
      return lastError ? { server, lastError } : { server };
    });
  }

  /**
   * Starts a login whose redirect comes back to `callbackUrl`. Resolves with the authorization
   * URL for the user to open, or `connected` when the server let nanobot in without one.
   */
  async begin(server: string, callbackUrl: string): Promise<BeginResult> {
    const spec = this.deps.servers()[server];
    if (!spec) throw new WebLoginRefused(`no MCP server named ${server} in the config`, 404);
    if (!serverUrl(spec, this.deps.env) || !usesOAuth(spec)) {
      throw new WebLoginRefused(`MCP server ${server} does not log in with OAuth (it has a command, or an Authorization header)`, 400);
    }
    if (spec.oauth?.grant === "client_credentials") {
      throw new WebLoginRefused(`MCP server ${server} uses the client_credentials grant: nanobot gets its tokens without a login`, 400);
    }
    // Loaded here, not at the gateway's start: the login module brings the MCP client SDK.
    const { loginToServer } = await import("./login.js");
    let shown: (url: string) => void = () => undefined;
    const urlShown = new Promise<string>((resolve) => (shown = resolve));
    const timeoutMs = this.deps.timeoutMs ?? 600_000;
    this.inProgress.add(server);
    this.failed.delete(server);
    const login = loginToServer(server, spec, {
      home: this.deps.home,
      env: this.deps.env,
      timeoutSeconds: Math.ceil(timeoutMs / 1000),
      onAuthorizationUrl: (url) => shown(url.toString()),
      callback: {
        redirectUrl: callbackUrl,
        waitForCode: (state) => this.waitWithTimeout(state, timeoutMs, server),
        close: async () => undefined,
      },
    });
    const finished = login.then(
      async (result) => {
        const failure = await this.deps.reconnect(server);
        if (failure) throw new Error(failure);
        this.deps.log("info", `MCP server ${server} logged in from the web UI`, { tools: result.tools });
      },
      (err: unknown) => {
        throw err instanceof Error ? err : new Error(String(err));
      },
    );
    // The outcome after the URL went out is only logged and shown as a notice.
    void finished
      .catch((err: Error) => {
        this.failed.set(server, err.message);
        this.deps.log("warn", `MCP login for ${server} failed: ${err.message}`);
      })
      .finally(() => this.inProgress.delete(server));
    const first = await Promise.race([urlShown.then((url) => ({ url })), finished.then(() => ({ url: undefined }))]);
    return first.url !== undefined ? { authorizationUrl: first.url } : { connected: true };
  }

  /** The browser's redirect back from the authorization server. */
  redirect(params: URLSearchParams): RedirectAnswer {
    return this.waiters.answer(params, "nanobot is connecting the server; you can close this tab and go back to the chat.");
  }

  /** Fails the logins still waiting (the gateway stops). */
  close(): void {
    this.waiters.cancelAll("the gateway stopped before the login finished");
  }

  private waitWithTimeout(state: string | null, timeoutMs: number, server: string): Promise<string> {
    const code = this.waiters.wait(state);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.waiters.forget(state);
        reject(new Error(`nobody finished the login for ${server} within ${Math.round(timeoutMs / 60_000)} minutes`));
      }, timeoutMs);
      timer.unref();
    });
    return Promise.race([code, timeout]).finally(() => clearTimeout(timer));
  }
}
