/**
 * OAuth state of one MCP server, kept in `<home>/mcp-oauth/<server>.json` (mode 0600, directory
 * 0700): the registered client, the tokens, the discovered metadata, the PKCE verifier of a login
 * in progress. The file is bound to the server's URL: a server moved elsewhere starts afresh.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

export interface StoredOAuth {
  /** The server URL the state belongs to. */
  url: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** Epoch ms when the access token expires (from `expires_in` at save time). */
  expiresAt?: number;
  discovery?: OAuthDiscoveryState;
  codeVerifier?: string;
  /** The loopback redirect the client was registered with. */
  redirectUrl?: string;
  /** Scope a server asked for (403 insufficient_scope) that the next login requests. */
  pendingScope?: string;
}

/** `<home>/mcp-oauth`. */
export function oauthDirFor(home: string): string {
  return path.join(home, "mcp-oauth");
}

/** A file name for any server name (names are config keys; keep them readable but safe). */
export function oauthFileFor(dir: string, server: string): string {
  return path.join(dir, `${server.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`);
}

export class OAuthStore {
  private cache?: StoredOAuth;

  /** `dir` undefined: state lives in memory only (tests, one-shot clients). */
  constructor(
    private readonly dir: string | undefined,
    readonly server: string,
    readonly url: string,
  ) {}

  get file(): string | undefined {
    return this.dir ? oauthFileFor(this.dir, this.server) : undefined;
  }

  /** Reads the file again on the next `read` (a login in another process); memory-only state is kept. */
  forget(): void {
    if (this.dir) this.cache = undefined;
  }

  async read(): Promise<StoredOAuth> {
    if (this.cache) return this.cache;
    let loaded: StoredOAuth = { url: this.url };
    const file = this.file;
    if (file) {
      try {
        const parsed = JSON.parse(await readFile(file, "utf8")) as StoredOAuth;
        // Tokens for another URL are not sent to this one.
        if (parsed && typeof parsed === "object" && parsed.url === this.url) loaded = parsed;
      } catch {
        // Missing or unreadable: no state yet.
      }
    }
    this.cache = loaded;
    return loaded;
  }

  async update(change: (state: StoredOAuth) => StoredOAuth): Promise<void> {
    const next = change({ ...(await this.read()) });
    this.cache = next;
    const file = this.file;
    if (!file || !this.dir) return;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    // The mode given to writeFile is masked by the umask; tokens are never group- or world-readable.
    await chmod(tmp, 0o600);
    await rename(tmp, file);
  }

  /** Forgets everything (logout). Resolves true when there was a file. */
  async remove(): Promise<boolean> {
    this.cache = { url: this.url };
    const file = this.file;
    if (!file) return false;
    try {
      await readFile(file);
    } catch {
      return false;
    }
    await rm(file, { force: true });
    return true;
  }
}
