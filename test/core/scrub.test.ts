import { describe, expect, it } from "vitest";
import { configSecrets, maskCommandLine, maskSecrets } from "../../src/config/mask.js";
import { isSecretKey, rememberSecrets, scrubSecretData, scrubSecretText } from "../../src/core/scrub.js";

describe("scrubSecretText", () => {
  it("masks URL passwords, token-shaped users and secret query parameters, keeping the rest of the URL", () => {
    expect(scrubSecretText("GET https://user:hunter2pass@host:9/mcp?token=abc&page=2&api_key=zz&sig=q&X-Amz-Signature=s failed")).toBe(
      "GET https://user:****@host:9/mcp?token=****&page=2&api_key=****&sig=****&X-Amz-Signature=**** failed",
    );
    expect(scrubSecretText("git clone https://ghp_abcdefghijklmnopqrstuvwxyz12@github.com/x/y")).toBe("git clone https://****@github.com/x/y");
  });

  it("masks values after secret-named flags and assignments, not after ordinary ones", () => {
    expect(scrubSecretText("spawn srv --api-key=abcdefghijklmnop --token qrstuvwxyz123456 --port 80 --max-tokens 100")).toBe(
      "spawn srv --api-key=abc…mnop --token qrs…3456 --port 80 --max-tokens 100",
    );
    expect(scrubSecretText("OPENAI_API_KEY=sk-zzz sessionKey=cli:direct max_tokens=100")).toBe("OPENAI_API_KEY=**** sessionKey=cli:direct max_tokens=100");
    expect(scrubSecretText('body {"apiKey": "abcdef123456789", "model": "x"}')).toBe('body {"apiKey": "abc…6789", "model": "x"}');
  });

  it("masks well-known token formats anywhere, and bearer credentials, but not prose", () => {
    const text = "keys sk-proj-abcdefghijklmnopqrstu ghp_abcdefghijklmnopqrstuvwxyz12 xoxb-1234-5678-abcdefgh AKIAABCDEFGHIJKLMNOP";
    const out = scrubSecretText(text);
    for (const secret of text.split(" ").slice(1)) expect(out).not.toContain(secret);
    expect(out).toContain("sk-…rstu");
    expect(scrubSecretText("Authorization: Bearer abc.def.ghi")).toBe("Authorization: Bearer ****");
    const prose = "Token limit exceeded; Basic authentication failed; the task is done";
    expect(scrubSecretText(prose)).toBe(prose);
  });

  it("masks remembered config values wherever they reappear, and leaves masked text alone", () => {
    rememberSecrets(["123456:tg-remembered-bot-token"]);
    expect(scrubSecretText("POST https://api.telegram.org/bot123456:tg-remembered-bot-token/sendMessage")).not.toContain("tg-remembered");
    expect(scrubSecretText("key sk-…1234 and ****")).toBe("key sk-…1234 and ****");
  });

  it("masks values under secret names in log data, but not identifiers such as sessionKey", () => {
    expect(scrubSecretData({ sessionKey: "cli:direct", headers: { "X-Api-Key": "abcdefghijklmnop" }, GITHUB_TOKEN: "short" })).toEqual({
      sessionKey: "cli:direct",
      headers: { "X-Api-Key": "abc…mnop" },
      GITHUB_TOKEN: "****",
    });
    expect(isSecretKey("sessionKey")).toBe(false);
    expect(isSecretKey("X-Api-Key")).toBe(true);
  });
});

describe("maskSecrets on MCP servers", () => {
  const server = {
    command: "npx",
    args: ["srv", "--api-key", "arg-secret-value-1", "--token=inline-secret-2", "ghp_abcdefghijklmnopqrstuvwxyz12", "--verbose"],
    env: { FAULT: "healthy", GH_TOKEN: "ttttttt", BLOB: "abc123def456ghi789jkl0" },
    headers: { "X-Custom": "custom-secret-value" },
    url: "http://u:pass1234@h/?token=tok12345&page=1",
  };

  it("masks every env and header value, secret args and URL credentials", () => {
    expect(maskSecrets({ mcpServers: { s: server } })).toEqual({
      mcpServers: {
        s: {
          command: "npx",
          args: ["srv", "--api-key", "arg…ue-1", "--token=inl…et-2", "ghp…yz12", "--verbose"],
          env: { FAULT: "****", GH_TOKEN: "****", BLOB: "abc…jkl0" },
          headers: { "X-Custom": "cus…alue" },
          url: "http://u:****@h/?token=****&page=1",
        },
      },
    });
    expect(maskCommandLine(server.command, server.args)).toBe("npx srv --api-key arg…ue-1 --token=inl…et-2 ghp…yz12 --verbose");
  });

  it("masks a provider's extraHeaders values, keeping the header names", () => {
    expect(maskSecrets({ providers: { p: { extraHeaders: { "X-Org": "org-value-1234" } } } })).toEqual({ providers: { p: { extraHeaders: { "X-Org": "org…1234" } } } });
  });

  it("keeps a Go env declaration's description and non-secret defaults", () => {
    const env = { MODEL: { default: "gpt-4o", description: "d" }, OPENAI_API_KEY: { default: "sk-default-value-9999", description: "k" } };
    expect(maskSecrets({ env })).toEqual({ env: { MODEL: { default: "gpt-4o", description: "d" }, OPENAI_API_KEY: { default: "sk-…9999", description: "k" } } });
  });

  it("lists the raw values to remember, without innocent env values", () => {
    const found = configSecrets({ mcpServers: { s: server } });
    for (const v of ["arg-secret-value-1", "inline-secret-2", "ghp_abcdefghijklmnopqrstuvwxyz12", "ttttttt", "abc123def456ghi789jkl0", "pass1234", "tok12345"]) {
      expect(found).toContain(v);
    }
    expect(found).not.toContain("healthy");
  });
});
