import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { resolvePromptInstructions } from "../../src/mcp/instructions.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import type { ElicitationRequest, SamplingRequest } from "../../src/mcp/types.js";
import { referenceSpec, textOfOutput } from "./helpers.js";

describe("requests from servers (sampling, elicitation, roots) and prompt instructions", () => {
  let manager: McpClientManager;
  const samplingRequests: SamplingRequest[] = [];
  const elicitations: ElicitationRequest[] = [];

  beforeAll(async () => {
    manager = await McpClientManager.connect(
      { everything: referenceSpec("everything") },
      {
        sampling: async (request) => {
          samplingRequests.push(request);
          return { text: "sampled answer", model: "fake/model", stopReason: "endTurn" };
        },
        elicitation: async (request) => {
          elicitations.push(request);
          return { action: "accept", content: { name: "Grace" } };
        },
        roots: [{ uri: "file:///tmp/project", name: "project" }],
      },
    );
  });
  afterAll(async () => {
    await manager.close();
  });

  it("answers sampling/createMessage through the injected callback, in core messages", async () => {
    const out = await manager.callTool("everything", "trigger-sampling-request", { prompt: "say hi", maxTokens: 20 });
    expect(out.isError).toBeFalsy();
    expect(textOfOutput(out)).toContain("sampled answer");
    expect(samplingRequests).toHaveLength(1);
    expect(samplingRequests[0]).toMatchObject({ server: "everything", maxTokens: 20 });
    expect(textOf(samplingRequests[0]!.messages[0]!)).toContain("say hi");
  });

  it("forwards elicitation to the injected callback", async () => {
    const out = await manager.callTool("everything", "trigger-elicitation-request", {});
    expect(textOfOutput(out)).toContain("- Name: Grace");
    expect(elicitations[0]).toMatchObject({ server: "everything", mode: "form", requestedSchema: { type: "object" } });
  });

  it("advertises the configured roots", async () => {
    const out = await manager.callTool("everything", "get-roots-list", {});
    expect(textOfOutput(out)).toContain("file:///tmp/project");
  });

  it("turns an MCP prompt into instruction text", async () => {
    const text = await resolvePromptInstructions(manager, { mcpServer: "everything", prompt: "args-prompt", args: { city: "Porto" } });
    expect(text).toContain("Porto");
  });
});

describe("capabilities not configured", () => {
  let manager: McpClientManager;
  beforeAll(async () => {
    manager = await McpClientManager.connect({ everything: referenceSpec("everything") });
  });
  afterAll(async () => {
    await manager.close();
  });

  it("does not advertise sampling, elicitation or roots, so servers do not offer those tools", () => {
    const names = manager.tools().map((t) => t.name);
    expect(names).toContain("mcp_everything_echo");
    expect(names).not.toContain("mcp_everything_trigger-sampling-request");
    expect(names).not.toContain("mcp_everything_trigger-elicitation-request");
    expect(names).not.toContain("mcp_everything_get-roots-list");
  });
});
