/**
 * nanobot's `OAuthClientProvider` for the MCP SDK's client auth: the SDK discovers the metadata,
 * registers (dynamic registration or a client ID metadata document), runs PKCE, exchanges and
 * refreshes tokens and steps scopes up; this class supplies the client's identity and keeps the
 * state in the server's token file. Where no user can authorise, a needed login fails with
 * `NeedsLoginError` instead of registering clients or opening browsers in the background.
 */
import { createHash, randomBytes } from "node:crypto";
import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { createPrivateKeyJwtAuth } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type { AddClientAuthentication } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { McpOAuthSpec, OAuthAuthorizer } from "../types.js";
import { NeedsLoginError } from "./needs-login.js";
import type { OAuthStore, StoredOAuth } from "./token-store.js";

/** The redirect used when no login has registered one (headless completion reads it back from the redirect). */
const DEFAULT_REDIRECT_PATH = "/callback";

export interface OAuthProviderOptions {
  server: string;
  /** The MCP server's URL (the resource the tokens are for). */
  url: string;
  spec: McpOAuthSpec | undefined;
  store: OAuthStore;
  /** Completes an authorization (login command, headless clients); absent = needs an admin's login. */
  authorize?: OAuthAuthorizer;
  /** The loopback redirect of a login in progress. */
  redirectUrl?: string;
  clientName?: string;
}

export class NanobotOAuthProvider implements OAuthClientProvider {
  readonly addClientAuthentication?: AddClientAuthentication;
  private stored!: StoredOAuth;
  /** PKCE verifiers of authorizations started by this process, by their S256 challenge. */
  private readonly verifiers = new Map<string, string>();
  /** The verifier of the code being exchanged right now. */
  private exchangeVerifier?: string;
  private authorizing?: Promise<void>;
  private completed = false;

  private constructor(private readonly options: OAuthProviderOptions) {
    const { spec } = options;
    if (spec?.grant === "client_credentials" && spec.privateKey && spec.clientId) {
      this.addClientAuthentication = createPrivateKeyJwtAuth({
        issuer: spec.clientId,
        subject: spec.clientId,
        privateKey: spec.privateKey,
        alg: spec.signingAlgorithm ?? "RS256",
      });
    }
  }

  /** Loads the server's stored state first (the SDK reads `redirectUrl` synchronously). */
  static async open(options: OAuthProviderOptions): Promise<NanobotOAuthProvider> {
    const provider = new NanobotOAuthProvider(options);
    provider.stored = await options.store.read();
    return provider;
  }

  private get machineToMachine(): boolean {
    return this.options.spec?.grant === "client_credentials";
  }

  get redirectUrl(): string | undefined {
    if (this.machineToMachine) return undefined;
    const port = this.options.spec?.callbackPort;
    return this.options.redirectUrl ?? this.stored.redirectUrl ?? `http://127.0.0.1${port ? `:${port}` : ""}${DEFAULT_REDIRECT_PATH}`;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.spec?.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const spec = this.options.spec;
    const scope = spec?.scopes?.length ? spec.scopes.join(" ") : undefined;
    if (this.machineToMachine) {
      return {
        client_name: this.options.clientName ?? "nanobot",
        redirect_uris: [],
        grant_types: ["client_credentials"],
        token_endpoint_auth_method: spec?.privateKey ? "private_key_jwt" : "client_secret_basic",
        ...(scope ? { scope } : {}),
      };
    }
    const redirect = this.redirectUrl;
    return {
      client_name: this.options.clientName ?? "nanobot",
      redirect_uris: redirect ? [redirect] : [],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      // A native app is a public client unless it was given a secret.
      token_endpoint_auth_method: spec?.clientSecret ? "client_secret_basic" : "none",
      ...(scope ? { scope } : {}),
    };
  }

  /** A fresh `state` per authorization request; the loopback callback checks it. */
  state(): string {
    return randomBytes(16).toString("base64url");
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const spec = this.options.spec;
    const stored = this.stored.client;
    if (spec?.clientId) {
      // Configured credentials win; the stored copy only adds the issuer the SDK bound them to.
      const issuer = stored?.client_id === spec.clientId ? (stored as { issuer?: string }).issuer : undefined;
      return { client_id: spec.clientId, ...(spec.clientSecret ? { client_secret: spec.clientSecret } : {}), ...(issuer ? { issuer } : {}) } as OAuthClientInformationMixed;
    }
    // Nobody to finish an authorization: do not register a client nobody will use.
    if (!stored && !this.options.authorize && !this.stored.tokens) throw new NeedsLoginError(this.options.server);
    return stored;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    const { client_secret: secret, ...rest } = info as OAuthClientInformationMixed & { client_secret?: string };
    // A configured secret stays in the config only.
    const client = secret !== undefined && secret === this.options.spec?.clientSecret ? rest : info;
    await this.save((s) => ({ ...s, client, ...(this.options.redirectUrl ? { redirectUrl: this.options.redirectUrl } : {}) }));
  }

  tokens(): OAuthTokens | undefined {
    return this.stored.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const expiresAt = tokens.expires_in !== undefined ? Date.now() + tokens.expires_in * 1000 : undefined;
    await this.save((s) => {
      const { pendingScope: _done, expiresAt: _old, ...rest } = s;
      return { ...rest, tokens, ...(expiresAt !== undefined ? { expiresAt } : {}) };
    });
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.machineToMachine) throw new Error(`MCP server '${this.options.server}': the client_credentials grant needs no browser; check mcpServers.${this.options.server}.oauth`);
    const authorize = this.options.authorize;
    if (!authorize) {
      // Step-up: the next login asks for what the server wanted here.
      const scope = authorizationUrl.searchParams.get("scope") ?? undefined;
      if (scope) await this.save((s) => ({ ...s, pendingScope: scope }));
      throw new NeedsLoginError(this.options.server);
    }
    // Requests that met the 401 together share one authorization.
    if (this.authorizing) {
      await this.authorizing.catch(() => undefined);
      this.completed = true;
      return;
    }
    this.authorizing = this.authorizeAndExchange(authorize, authorizationUrl);
    try {
      await this.authorizing;
      this.completed = true;
    } finally {
      this.authorizing = undefined;
    }
  }

  /** Gets the code (browser, headless) and exchanges it with the verifier of this very request. */
  private async authorizeAndExchange(authorize: OAuthAuthorizer, authorizationUrl: URL): Promise<void> {
    const code = await authorize(this.options.server, authorizationUrl);
    const challenge = authorizationUrl.searchParams.get("code_challenge") ?? "";
    this.exchangeVerifier = this.verifiers.get(challenge);
    try {
      // Discovery is cached by now (saveDiscoveryState), so this goes straight to the token endpoint.
      await auth(this, { serverUrl: this.options.url, authorizationCode: code });
    } finally {
      this.exchangeVerifier = undefined;
    }
  }

  /** True once after an authorization finished here: the request that stopped for it may go again. */
  takeCompleted(): boolean {
    const done = this.completed;
    this.completed = false;
    return done;
  }

  /**
   * The transport's fetch: a 403 `insufficient_scope` records the scope the server wants, so the
   * next `nanobot mcp login` asks for it even when the SDK only refreshed the token meanwhile.
   */
  readonly fetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    if (response.status === 403) {
      const { error, scope } = extractWWWAuthenticateParams(response);
      if (error === "insufficient_scope" && scope) {
        const wanted = new Set([...(this.stored.tokens?.scope ?? "").split(" "), ...scope.split(" ")].filter(Boolean));
        await this.save((s) => ({ ...s, pendingScope: [...wanted].join(" ") }));
      }
    }
    return response;
  };

  /** Scope a server asked for while nobody could log in (the login command requests it). */
  get pendingScope(): string | undefined {
    return this.stored.pendingScope;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (!this.options.authorize) return;
    this.verifiers.set(createHash("sha256").update(codeVerifier).digest("base64url"), codeVerifier);
    await this.save((s) => ({ ...s, codeVerifier }));
  }

  codeVerifier(): string {
    const verifier = this.exchangeVerifier ?? this.stored.codeVerifier;
    if (!verifier) throw new Error(`MCP server '${this.options.server}': no PKCE verifier saved for this authorization`);
    return verifier;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.machineToMachine) return undefined;
    const params = new URLSearchParams({ grant_type: "client_credentials" });
    if (scope) params.set("scope", scope);
    return params;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    await this.save((s) => {
      const next = { ...s };
      if (scope === "all" || scope === "client") delete next.client;
      if (scope === "all" || scope === "tokens") {
        delete next.tokens;
        delete next.expiresAt;
      }
      if (scope === "all" || scope === "verifier") delete next.codeVerifier;
      if (scope === "all" || scope === "discovery") delete next.discovery;
      return next;
    });
  }

  async saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    await this.save((s) => ({ ...s, discovery }));
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.stored.discovery;
  }

  private async save(change: (state: StoredOAuth) => StoredOAuth): Promise<void> {
    await this.options.store.update(change);
    this.stored = await this.options.store.read();
  }
}
