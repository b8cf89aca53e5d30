/**
 * The MCP conformance server suite (0.1.13) against nanobot's REAL gateway `/mcp` (the
 * AgentLoop behind it, the fake LLM as the model), not the test profile: every scenario that
 * tests a capability nanobot declares, with items nanobot serves, must pass. Scenarios that
 * call the suite's own fixture items (`test_simple_text`, `test://static-text`, …) cannot pass
 * against a server that does not have them; they are listed, with that reason, and reported.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";
import { readResults, runSuite } from "./suite-runner.js";

/** Scenarios that need the suite's fixture tools, resources or prompts, which nanobot does not serve. */
const NEEDS_SUITE_FIXTURES = new Set<string>([
  "tools-call-simple-text", // test_simple_text
  "tools-call-image", // test_image_content
  "tools-call-audio", // test_audio_content
  "tools-call-embedded-resource", // test_embedded_resource
  "tools-call-mixed-content", // test_multiple_content_types
  "tools-call-with-logging", // test_tool_with_logging
  "tools-call-error", // test_error_handling
  "tools-call-with-progress", // test_tool_with_progress
  "tools-call-sampling", // test_sampling
  "tools-call-elicitation", // test_elicitation
  "json-schema-2020-12", // json_schema_2020_12_tool
  "elicitation-sep1034-defaults", // test_elicitation_sep1034_defaults
  "elicitation-sep1330-enums", // test_elicitation_sep1330_enums
  "server-sse-polling", // test_reconnection
  "resources-read-text", // test://static-text
  "resources-read-binary", // test://static-binary
  "resources-templates-read", // test://template/{id}/data
  "prompts-get-simple", // test_simple_prompt
  "prompts-get-with-args", // test_prompt_with_arguments
  "prompts-get-embedded-resource", // test_prompt_with_embedded_resource
  "prompts-get-with-image", // test_prompt_with_image
]);

let fx: GatewayFixture;
let outDir: string;

beforeAll(async () => {
  fx = await startGatewayFixture({ makeProcessor: (runtime) => new AgentLoop({ runtime }) });
  outDir = await mkdtemp(path.join(tmpdir(), "nanobot-gw-conformance-"));
});
afterAll(async () => {
  await fx?.close();
  await rm(outDir, { recursive: true, force: true });
});

describe("MCP conformance suite against the real gateway /mcp", () => {
  it("passes every scenario for what nanobot declares and serves", async () => {
    const run = await runSuite(`${fx.url}/mcp`, "all", outDir);
    const results = await readResults(outDir);
    expect(results.length, `the suite ran no scenario:\n${run.output.slice(-2000)}`).toBeGreaterThan(0);
    const passing = results.filter((r) => r.failed.length === 0 && r.passed > 0).map((r) => r.scenario);
    const failing = results.filter((r) => !passing.includes(r.scenario));
    console.log(
      `MCP conformance (real gateway /mcp): ${passing.length}/${results.length} scenarios passed: ${passing.join(", ")}\n` +
        failing.map((r) => `  ${r.scenario}: ${r.failed.map((c) => `${c.id} ${c.errorMessage ?? ""}`).join("; ") || "no check passed"}`).join("\n"),
    );
    const unexpected = failing.filter((r) => !NEEDS_SUITE_FIXTURES.has(r.scenario)).map((r) => r.scenario);
    expect(unexpected).toEqual([]);
    // Every scenario that needs nothing but what nanobot declares ran and passed.
    expect(passing.sort()).toEqual(results.map((r) => r.scenario).filter((s) => !NEEDS_SUITE_FIXTURES.has(s)).sort());
  }, 170_000);
});
