/**
 * The bot's app token for the Bot Connector, and the credentials factory botbuilder asks for it.
 *
 * botbuilder's own password credentials go through MSAL, which insists on an `https:` authority
 * and on instance discovery at login.microsoftonline.com; that rules out private clouds with
 * their own authority and the loopback test server. The grant itself is one documented request
 * (Entra ID v2 client credentials, scope `https://api.botframework.com/.default`, exactly what
 * the Python nanobot sends), so this class implements botframework-connector's `AppCredentials`
 * extension point (`refreshToken`) with it; the SDK keeps the token cache and request signing.
 */
import { AppCredentials, ServiceClientCredentialsFactory } from "botframework-connector";
import type { ServiceClientCredentials } from "botframework-connector";
import { TeamsTokenError } from "./errors.js";

export interface TokenEndpoint {
  appId: string;
  appPassword: string;
  /** Empty = multi-tenant bot (tokens from the botframework.com tenant). */
  tenantId: string;
  loginUrl: string;
  /** Path of the setting that holds the password, for error messages. */
  passwordKey: string;
}

export class ClientSecretCredentials extends AppCredentials {
  constructor(private readonly endpoint: TokenEndpoint) {
    super(endpoint.appId, endpoint.tenantId || undefined);
    // The SDK's token cache is process-wide and keyed by app id + scope; two bots (or two
    // clouds) with one app id must not share a token issued by another authority.
    this.tokenCacheKey = `${endpoint.appId}@${this.tokenUrl()}-cache`;
  }

  tokenUrl(): string {
    const tenant = this.endpoint.tenantId.trim() || "botframework.com";
    return `${this.endpoint.loginUrl.replace(/\/+$/, "")}/${encodeURIComponent(tenant)}/oauth2/v2.0/token`;
  }

  protected async refreshToken(): Promise<{ accessToken: string; expiresOn: Date }> {
    const body = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: this.endpoint.appId,
      client_secret: this.endpoint.appPassword,
      scope: "https://api.botframework.com/.default",
    });
    let response: Response;
    try {
      response = await fetch(this.tokenUrl(), { method: "POST", body, signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      throw new TeamsTokenError(`app token request to ${this.tokenUrl()} failed: ${error instanceof Error ? error.message : String(error)}`, 0);
    }
    const text = await response.text();
    let payload: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      payload = JSON.parse(text) as typeof payload;
    } catch {
      // A proxy's HTML error page: the status says enough.
    }
    if (!response.ok || typeof payload.access_token !== "string") {
      const why = typeof payload.error_description === "string" ? payload.error_description : typeof payload.error === "string" ? payload.error : text.slice(0, 200);
      const hint = response.status === 400 || response.status === 401 ? ` (check ${this.endpoint.passwordKey} and the appId/tenantId)` : "";
      throw new TeamsTokenError(`app token refused by ${this.tokenUrl()}: HTTP ${response.status} ${why}${hint}`, response.status);
    }
    const seconds = typeof payload.expires_in === "number" ? payload.expires_in : Number(payload.expires_in ?? 3600) || 3600;
    return { accessToken: payload.access_token, expiresOn: new Date(Date.now() + seconds * 1000) };
  }
}

/** Hands botbuilder our credentials for this bot's app id (the only one it serves). */
export class ClientSecretCredentialsFactory extends ServiceClientCredentialsFactory {
  constructor(private readonly credentials: ClientSecretCredentials) {
    super();
  }

  isValidAppId(appId: string): Promise<boolean> {
    return Promise.resolve(appId === this.credentials.appId);
  }

  isAuthenticationDisabled(): Promise<boolean> {
    return Promise.resolve(false);
  }

  createCredentials(appId: string): Promise<ServiceClientCredentials> {
    if (appId !== this.credentials.appId) return Promise.reject(new Error(`this bot has no credentials for app id ${appId}`));
    return Promise.resolve(this.credentials);
  }
}
