/**
 * What a connection needs from OAuth: a provider for a URL server, and knowing when a request
 * that stopped with the SDK's `UnauthorizedError` may go again (the provider completed the
 * authorization and exchanged the code meanwhile).
 */
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { serverUrl, usesOAuth } from "../server-spec.js";
import type { McpServerSpec, OAuthAuthorizer } from "../types.js";
import { isNeedsLogin, needsLoginMessage } from "./needs-login.js";
import { NanobotOAuthProvider } from "./provider.js";
import { OAuthStore } from "./token-store.js";

/** Authorizations one request may go through (a step-up may follow the first login); then it fails. */
export const MAX_AUTHORIZATIONS = 3;

export interface OAuthContext {
  oauthDir?: string;
  oauthAuthorize?: OAuthAuthorizer;
  oauthRedirectUrl?: string;
  env: Record<string, string | undefined>;
  clientName?: string;
}

/** The server's OAuth state (one per connection), or undefined for a server that does not use OAuth. */
export function oauthStoreFor(server: string, spec: McpServerSpec, ctx: OAuthContext): OAuthStore | undefined {
  const url = serverUrl(spec, ctx.env);
  return url && usesOAuth(spec) ? new OAuthStore(ctx.oauthDir, server, url) : undefined;
}

/** A provider reading the server's token file afresh (a login in another process is seen on reconnect). */
export async function oauthProviderFor(server: string, spec: McpServerSpec, store: OAuthStore | undefined, ctx: OAuthContext): Promise<NanobotOAuthProvider | undefined> {
  if (!store) return undefined;
  store.forget();
  return NanobotOAuthProvider.open({
    server,
    url: store.url,
    spec: spec.oauth,
    store,
    ...(ctx.oauthAuthorize ? { authorize: ctx.oauthAuthorize } : {}),
    ...(ctx.clientName ? { clientName: ctx.clientName } : {}),
    ...(ctx.oauthRedirectUrl ? { redirectUrl: ctx.oauthRedirectUrl } : {}),
  });
}

/** After `err`: true when an authorization finished meanwhile, so the request may be sent again. */
export function authorizedSince(err: unknown, provider: NanobotOAuthProvider | undefined): boolean {
  return provider !== undefined && err instanceof UnauthorizedError && provider.takeCompleted();
}

/** The reason to show for an error that means "a login is needed", else undefined. */
export function loginReason(err: unknown, server: string): string | undefined {
  if (isNeedsLogin(err)) return needsLoginMessage(server);
  if (err instanceof UnauthorizedError) return needsLoginMessage(server);
  // A 403 insufficient_scope that a refreshed token did not cure: only a new login grants more.
  if (err instanceof Error && (err as { code?: unknown }).code === 403 && /upscoping/.test(err.message)) return needsLoginMessage(server);
  return undefined;
}
