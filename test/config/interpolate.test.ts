import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { interpolateString, resolveConfig } from "../../src/config/index.js";

const opts = (env: Record<string, string | undefined>) => ({ env, file: "nanobot.yaml" });

describe("${VAR} interpolation", () => {
  it("substitutes set variables anywhere in a string", () => {
    expect(interpolateString("Bearer ${TOKEN}/${TOKEN}", "x", opts({ TOKEN: "t1" }))).toBe("Bearer t1/t1");
  });

  it("uses ${VAR:-default} when the variable is unset or empty", () => {
    expect(interpolateString("${HOST:-127.0.0.1}:${PORT:-8080}", "x", opts({ PORT: "" }))).toBe("127.0.0.1:8080");
    expect(interpolateString("${HOST:-127.0.0.1}", "x", opts({ HOST: "0.0.0.0" }))).toBe("0.0.0.0");
    expect(interpolateString("${EMPTY:-}", "x", opts({}))).toBe("");
  });

  it("keeps $${VAR} literally", () => {
    expect(interpolateString("cost: $${PRICE}", "x", opts({}))).toBe("cost: ${PRICE}");
  });

  it("an empty but set variable without default is the empty string", () => {
    expect(interpolateString("k=${SET_EMPTY}", "x", opts({ SET_EMPTY: "" }))).toBe("k=");
  });

  it("a missing variable is a ConfigError naming it and the key path", () => {
    let caught: unknown;
    try {
      interpolateString("${NOPE}", "mcpServers.fs.env.KEY", opts({}));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).path).toBe("mcpServers.fs.env.KEY");
    expect((caught as ConfigError).message).toBe(
      "nanobot.yaml: mcpServers.fs.env.KEY: environment variable NOPE is not set (set it, or write ${NOPE:-default})",
    );
  });

  it("applies to nested values and list items of a whole config, with env-section defaults", () => {
    const { config } = resolveConfig(
      {
        env: { REGION: { default: "eu" }, OPTIONAL_TAG: { optional: true } },
        providers: { custom: { apiBase: "https://${REGION}.example.com/v1", apiKey: "${MY_KEY}" } },
        mcpServers: { fs: { command: "npx", args: ["--root", "${ROOT:-/tmp}", "--tag=${OPTIONAL_TAG}"] } },
      },
      { env: { HOME: "/h", MY_KEY: "secret-1" }, file: "nanobot.yaml", envProviders: false },
    );
    expect(config.providers.custom).toEqual({ apiBase: "https://eu.example.com/v1", apiKey: "secret-1" });
    expect(config.mcpServers.fs?.args).toEqual(["--root", "/tmp", "--tag="]);
  });

  it("reports a missing variable inside a list with its index", () => {
    expect(() =>
      resolveConfig({ mcpServers: { fs: { command: "npx", args: ["${DIR}"] } } }, { env: {}, file: "config.json" }),
    ).toThrow("config.json: mcpServers.fs.args[0]: environment variable DIR is not set");
  });
});
