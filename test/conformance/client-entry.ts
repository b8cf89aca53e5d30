/**
 * The client the conformance suite drives (`conformance client --command "…"`): nanobot's MCP
 * client (McpClientManager → McpConnection → the OAuth provider) against the suite's server at
 * the URL in the last argument. The browser step of an authorization is played headlessly: the
 * authorization URL is fetched and the code read off its redirect. Exit 0 when every listed tool
 * was called without error.
 *
 * MCP_CONFORMANCE_SCENARIO names the scenario; MCP_CONFORMANCE_CONTEXT carries credentials for
 * the pre-registration and client_credentials scenarios, which become `mcpServers.<x>.oauth`.
 */
import { McpClientManager } from "../../src/mcp/manager.js";
import { ElicitationRouter } from "../../src/mcp/elicitation-router.js";
import type { McpOAuthSpec, McpServerSpec } from "../../src/mcp/types.js";

/** What the suite serves at this address; its authorization server accepts it as a client ID metadata document. */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

interface Context {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
}

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as Context;

function oauthFor(): McpOAuthSpec {
  const oauth: McpOAuthSpec = { clientMetadataUrl: CLIENT_METADATA_URL };
  if (context.client_id) oauth.clientId = context.client_id;
  if (context.client_secret) oauth.clientSecret = context.client_secret;
  if (scenario.startsWith("auth/client-credentials")) {
    oauth.grant = "client_credentials";
    if (context.private_key_pem) oauth.privateKey = context.private_key_pem;
    if (context.signing_algorithm) oauth.signingAlgorithm = context.signing_algorithm;
  }
  return oauth;
}

/** The "browser": follows the authorization URL to the redirect and takes its code (state checked). */
async function followAuthorization(_server: string, authorizationUrl: URL): Promise<string> {
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  const location = response.headers.get("location");
  if (!location) throw new Error(`authorization endpoint answered ${response.status} without a redirect`);
  const redirect = new URL(location, authorizationUrl);
  const expectedState = authorizationUrl.searchParams.get("state");
  if (expectedState !== null && redirect.searchParams.get("state") !== expectedState) throw new Error("authorization redirect carried another state");
  const code = redirect.searchParams.get("code");
  if (!code) throw new Error(`authorization redirect has no code: ${redirect.searchParams.get("error") ?? location}`);
  return code;
}

/** Arguments that satisfy a tool's input schema well enough for the suite's fixture tools. */
function argumentsFor(schema: { properties?: Record<string, { type?: string }> }): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  let n = 0;
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    n += 1;
    if (prop.type === "number" || prop.type === "integer") args[name] = n;
    else if (prop.type === "boolean") args[name] = true;
    else if (prop.type === "string") args[name] = `value ${n}`;
  }
  return args;
}

async function main(): Promise<number> {
  if (!url?.startsWith("http")) throw new Error("usage: client-entry <server url>");
  const spec: McpServerSpec = { url, oauth: oauthFor(), connectTimeout: 25 };
  const manager = new McpClientManager(
    { conformance: spec },
    {
      oauthAuthorize: followAuthorization,
      // nanobot's own policy for a face with no user, as `mcp.elicitation: "defaults"` sets it.
      elicitation: new ElicitationRouter({ unattended: "defaults" }).handle,
      clientName: "nanobot-conformance",
    },
  );
  try {
    const failures = await manager.start();
    if (failures.length > 0) {
      process.stderr.write(`connect failed: ${failures.map((f) => f.reason).join("; ")}\n`);
      return 1;
    }
    const connection = manager.connection("conformance");
    let failed = 0;
    for (const tool of connection?.listing.tools ?? []) {
      const result = await manager.callTool("conformance", tool.name, argumentsFor(tool.inputSchema as never), { timeoutMs: 20_000 });
      const text = result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join(" ");
      process.stdout.write(`${tool.name}: ${result.isError ? "error: " : ""}${text}\n`);
      if (result.isError) failed += 1;
    }
    return failed > 0 ? 1 : 0;
  } finally {
    await manager.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`client-entry: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
