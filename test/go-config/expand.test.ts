/**
 * The expansion rules behind dynamic instructions (src/mcp/instructions.ts), on their own:
 * Go's nested braces, `${nanobot:time}` in a TZ, the env lookup Go does (exact, then
 * case-insensitive with `-` read as `_`), defaults, and the error for a hole.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { expandTemplate, rfc3339 } from "../../src/mcp/instructions.js";

const at = new Date("2026-12-03T12:34:56.789Z");
const ctx = (env: Record<string, string>, extra = {}) => ({ env, where: "agents.main.instructions", now: () => at, ...extra });

describe("expandTemplate", () => {
  it("nanobot:time is RFC 3339 in TZ (UTC without it)", () => {
    expect(rfc3339(at, undefined)).toBe("2026-12-03T12:34:56Z");
    expect(rfc3339(at, "Asia/Kolkata")).toBe("2026-12-03T18:04:56+05:30");
    expect(rfc3339(at, "America/New_York")).toBe("2026-12-03T07:34:56-05:00");
    expect(expandTemplate("now ${nanobot:time}", ctx({ TZ: "Europe/Berlin" }))).toBe("now 2026-12-03T13:34:56+01:00");
  });

  it("nanobot:time follows TIME_FORMAT, a Go reference-time layout", () => {
    expect(expandTemplate("${nanobot:time}", ctx({ TIME_FORMAT: "Mon Jan _2 15:04:05 MST 2006" }))).toBe("Thu Dec  3 12:34:56 UTC 2026");
    expect(expandTemplate("${nanobot:time}", ctx({ TIME_FORMAT: "Monday, January 2, 2006 3:04 PM -07:00", TZ: "America/New_York" }))).toBe(
      "Thursday, December 3, 2026 7:34 AM -05:00",
    );
    expect(expandTemplate("${nanobot:time}", ctx({ TIME_FORMAT: "2006-01-02T15:04:05.000Z07:00" }))).toBe("2026-12-03T12:34:56.789Z");
  });

  it("looks variables up as Go does, then env: defaults, then ${VAR:-default}", () => {
    expect(expandTemplate("${API_KEY}", ctx({ "api-key": "k1" }))).toBe("k1");
    expect(expandTemplate("${REGION}", ctx({}, { envDefaults: { REGION: "eu" } }))).toBe("eu");
    expect(expandTemplate("${REGION:-us}", ctx({}))).toBe("us");
    expect(expandTemplate("${REGION-us}", ctx({ REGION: "ap" }))).toBe("ap");
  });

  it("resolves servers.<name>.instructions (also servers['name'].instructions); a configured server that did not connect gives ''", () => {
    const servers = { serverNames: ["hf", "down"], serverInstructions: (s: string) => (s === "hf" ? "HF tools" : undefined) };
    expect(expandTemplate("${servers.hf.instructions}|${servers['down'].instructions}|", ctx({}, servers))).toBe("HF tools||");
    expect(() => expandTemplate("${servers.nope.instructions}", ctx({}, servers))).toThrow(/MCP server "nope", which is not in mcpServers/);
  });

  it("expands nested references first (Go's ${outer${inner}}), keeps $${…} literal and an unclosed ${ as text", () => {
    expect(expandTemplate("${GREETING_${LANG}}", ctx({ LANG: "FR", GREETING_FR: "bonjour" }))).toBe("bonjour");
    expect(expandTemplate("cost $5 and $${NOT_A_VAR} and ${unclosed", ctx({}))).toBe("cost $5 and ${NOT_A_VAR} and ${unclosed");
  });

  it("a reference that resolves to nothing is a ConfigError naming it and where it is", () => {
    let error: unknown;
    try {
      expandTemplate("Hello ${WHO}", ctx({}));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain("agents.main.instructions: ${WHO} is not set");
  });
});
