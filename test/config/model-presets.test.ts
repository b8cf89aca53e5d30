/** The preset rules of src/config/model-presets.ts that the CLI tests do not reach one by one. */
import { describe, expect, it } from "vitest";
import { findPreset, refFor, wireEffort } from "../../src/config/model-presets.js";
import { resolveConfig } from "../../src/config/index.js";

const load = (raw: Record<string, unknown>) => resolveConfig(raw, { env: { HOME: "/tmp/nb-presets-unit", NANOBOT_HOME: "/tmp/nb-presets-unit/home" }, cwd: "/tmp" }).config;

describe("Python reasoning efforts on the wire", () => {
  it("none and adaptive send nothing, xhigh and max the strongest wire value, the rest as written", () => {
    expect(["none", "adaptive", "xhigh", "max", "low", "minimal", undefined].map(wireEffort)).toEqual([undefined, undefined, "high", "high", "low", "minimal", undefined]);
  });
});

describe("refFor: provider + model", () => {
  it("auto and a model that already names its provider stay as they are; a forced provider prefixes", () => {
    expect(refFor("anthropic/claude-opus-4-5", "auto")).toBe("anthropic/claude-opus-4-5");
    expect(refFor("custom/x", "custom")).toBe("custom/x");
    expect(refFor("anthropic/claude-sonnet-4.5", "openrouter")).toBe("openrouter/anthropic/claude-sonnet-4.5");
    expect(refFor("gpt-4.1-mini", undefined)).toBe("gpt-4.1-mini");
  });
});

describe("findPreset", () => {
  it("exact first, then one case-insensitive match; two such matches are ambiguous", () => {
    const config = load({ modelPresets: { Fast: { model: "custom/a" }, fast: { model: "custom/b" }, Deep: { model: "custom/c" } } });
    expect(findPreset(config, "fast")).toBe("fast");
    expect(findPreset(config, "deep")).toBe("Deep");
    expect(findPreset(config, "FAST")).toBeUndefined();
    expect(findPreset(config, " default ")).toBe("default");
  });
});
