/**
 * `mcpServers.<x>.oauth` in config.json and nanobot.yaml: the keys reach the OAuth provider (a
 * pre-registered client is the client nanobot presents, its scopes are asked for) and a bad value
 * fails naming the file, the key and the expectation.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { loadConfig } from "../../src/config/index.js";
import { NanobotOAuthProvider } from "../../src/mcp/oauth/provider.js";
import { OAuthStore } from "../../src/mcp/oauth/token-store.js";
import { usesOAuth } from "../../src/mcp/server-spec.js";
import { tempTree } from "./helpers.js";
import type { TempTree } from "./helpers.js";

let tree: TempTree;
beforeEach(async () => {
  tree = await tempTree();
});
afterEach(async () => {
  await tree.cleanup();
});

async function providerFrom(name: string, text: string): Promise<NanobotOAuthProvider> {
  const configPath = await tree.write(name, text);
  const { config } = await loadConfig({ configPath, env: { HOME: tree.home }, cwd: tree.root });
  const spec = config.mcpServers.linear;
  expect(spec).toBeDefined();
  return NanobotOAuthProvider.open({ server: "linear", url: spec?.url ?? "", spec: spec?.oauth, store: new OAuthStore(undefined, "linear", spec?.url ?? "") });
}

async function errorOf(name: string, text: string): Promise<string> {
  const configPath = await tree.write(name, text);
  const err = await loadConfig({ configPath, env: { HOME: tree.home }, cwd: tree.root }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).message;
}

describe("mcpServers.<x>.oauth", () => {
  it("nanobot.yaml: a pre-registered client and its scopes are what the provider presents", async () => {
    const provider = await providerFrom(
      "nanobot.yaml",
      ["mcpServers:", "  linear:", "    url: https://mcp.linear.example/mcp", "    oauth:", "      clientId: pre-1", "      clientSecret: s3cret", "      scopes: [read, write]", "      callbackPort: 33418", ""].join("\n"),
    );
    expect(provider.clientInformation()).toEqual({ client_id: "pre-1", client_secret: "s3cret" });
    expect(provider.clientMetadata.scope).toBe("read write");
    expect(provider.clientMetadata.token_endpoint_auth_method).toBe("client_secret_basic");
    expect(provider.redirectUrl).toBe("http://127.0.0.1:33418/callback");
  });

  it("config.json (Python layout, tools.mcpServers): a client ID metadata document and machine-to-machine credentials", async () => {
    const provider = await providerFrom(
      "config.json",
      JSON.stringify({
        tools: {
          mcpServers: {
            linear: { url: "https://mcp.linear.example/mcp", oauth: { clientId: "svc", clientSecret: "k", grant: "client_credentials", scopes: "read", clientMetadataUrl: "https://nanobot.example/client.json" } },
          },
        },
      }),
    );
    expect(provider.clientMetadataUrl).toBe("https://nanobot.example/client.json");
    expect(provider.redirectUrl).toBeUndefined();
    expect(provider.prepareTokenRequest("read")?.toString()).toBe("grant_type=client_credentials&scope=read");
  });

  it("without a pre-registered client and with nobody to log in, the provider refuses to register one", async () => {
    const provider = await providerFrom("nanobot.yaml", ["mcpServers:", "  linear:", "    url: https://mcp.linear.example/mcp", ""].join("\n"));
    expect(() => provider.clientInformation()).toThrow("an admin must run `nanobot mcp login linear`");
  });

  it("bad values fail naming the file, the key and the expectation", async () => {
    expect(await errorOf("nanobot.yaml", ["mcpServers:", "  linear:", "    url: https://x.example/mcp", "    oauth:", "      clientMetadataUrl: http://insecure.example/c.json", ""].join("\n"))).toMatch(
      /nanobot\.yaml.*mcpServers\.linear\.oauth\.clientMetadataUrl.*https URL with a path/,
    );
    expect(await errorOf("config.json", JSON.stringify({ mcpServers: { linear: { url: "https://x.example/mcp", oauth: { grant: "client_credentials" } } } }))).toMatch(
      /config\.json.*mcpServers\.linear\.oauth.*client_credentials needs clientId and clientSecret or privateKey/,
    );
    expect(await errorOf("config.json", JSON.stringify({ mcpServers: { linear: { url: "https://x.example/mcp", oauth: { grant: "password" } } } }))).toMatch(
      /config\.json.*mcpServers\.linear\.oauth\.grant.*"authorization_code", "client_credentials"/,
    );
  });

  it("a server whose headers carry a credential is not spoken to with OAuth unless it has an oauth key", () => {
    expect(usesOAuth({ url: "https://x.example/mcp" })).toBe(true);
    expect(usesOAuth({ url: "https://x.example/mcp", headers: { Authorization: "Bearer t" } })).toBe(false);
    expect(usesOAuth({ url: "https://x.example/mcp", headers: { "X-Api-Key": "k" } })).toBe(false);
    expect(usesOAuth({ url: "https://x.example/mcp", headers: { "X-Trace": "1" } })).toBe(true);
    expect(usesOAuth({ url: "https://x.example/mcp", headers: { Authorization: "Bearer t" }, oauth: {} })).toBe(true);
    expect(usesOAuth({ command: "npx" })).toBe(false);
  });
});
