/**
 * Routing a server's elicitation to the user of the turn that caused it, against the real
 * everything server (stdio): declined when nobody can ask, asked when the calling session's
 * face registered, cancelled on timeout, on an answer that does not fit, or when the turn ends;
 * and the call's own timeout is held while the user answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ElicitationRouter } from "../../src/mcp/elicitation-router.js";
import type { ElicitationAsker } from "../../src/mcp/elicitation-router.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import type { ElicitationRequest } from "../../src/mcp/types.js";
import { referenceSpec, textOfOutput, waitFor } from "./helpers.js";

const TOOL = "trigger-elicitation-request";
let router: ElicitationRouter;
let manager: McpClientManager;

beforeAll(async () => {
  router = new ElicitationRouter({ timeoutMs: 3_000 });
  // A 2 s tool timeout: answers that take longer prove the timer is held meanwhile.
  manager = await McpClientManager.connect({ everything: { ...referenceSpec("everything"), toolTimeout: 2 } }, { elicitation: router.handle });
});
afterAll(async () => {
  await manager.close();
});

const elicit = async (caller?: string): Promise<string> => textOfOutput(await manager.callTool("everything", TOOL, {}, caller ? { caller } : {}));

describe("nobody can ask", () => {
  it("declines when no session has a call in flight (a hook or UI action)", async () => {
    expect(await elicit()).toContain("User declined");
  });

  it("declines when the calling session's channel registered no asker (agent -m, chat channels)", async () => {
    const unregister = router.register("web:someone-else", () => Promise.reject(new Error("must not be asked")));
    expect(await elicit("telegram:42")).toContain("User declined");
    unregister();
  });

  it("declines when calls of two sessions are in flight on the server (whose question is it?)", async () => {
    const asked: ElicitationRequest[] = [];
    const unregister = router.register("web:a", (request) => {
      asked.push(request);
      return Promise.resolve({ action: "accept", content: { name: "Ada" } });
    });
    const other = manager.callTool("everything", "trigger-long-running-operation", { duration: 2, steps: 2 }, { caller: "web:b" });
    expect(await elicit("web:a")).toContain("User declined");
    await other;
    unregister();
    expect(asked).toEqual([]);
  });
});

describe("the calling session's face asks", () => {
  it("forwards the question and returns the answer to the server", async () => {
    const asked: ElicitationRequest[] = [];
    const unregister = router.register("web:a", (request) => {
      asked.push(request);
      return Promise.resolve({ action: "accept", content: { name: "Ada", check: true } });
    });
    const text = await elicit("web:a");
    unregister();
    expect(text).toContain("- Name: Ada");
    expect(text).toContain("- Agreed to terms: true");
    expect(asked[0]).toMatchObject({ server: "everything", mode: "form", callers: ["web:a"], requestedSchema: { required: ["name"] } });
  });

  it("holds the call's 2 s timeout while the user takes longer to answer", async () => {
    const unregister = router.register("web:a", async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      return { action: "accept", content: { name: "Slow Sam" } };
    });
    const text = await elicit("web:a");
    unregister();
    expect(text).toContain("- Name: Slow Sam");
  });

  it("passes decline through", async () => {
    const unregister = router.register("web:a", () => Promise.resolve({ action: "decline" }));
    expect(await elicit("web:a")).toContain("User declined");
    unregister();
  });

  it("cancels an answer that does not fit the form (required name missing)", async () => {
    const unregister = router.register("web:a", () => Promise.resolve({ action: "accept", content: { check: true } }));
    expect(await elicit("web:a")).toContain("User cancelled");
    unregister();
  });

  it("cancels when the user does not answer in time, and tells the asker to stop asking", async () => {
    let aborted = false;
    const never: ElicitationAsker = (_request, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          aborted = true;
          resolve({ action: "accept", content: { name: "too late" } });
        });
      });
    const unregister = router.register("web:a", never);
    expect(await elicit("web:a")).toContain("User cancelled");
    unregister();
    expect(aborted).toBe(true);
  });

  it("cancels an open question when the turn ends (its registration is removed)", async () => {
    let asked = false;
    const unregister = router.register("web:a", (_request, signal) => {
      asked = true;
      return new Promise((resolve) => signal.addEventListener("abort", () => resolve({ action: "decline" })));
    });
    const pending = elicit("web:a");
    await waitFor(() => asked, "the question");
    unregister();
    expect(await pending).toContain("User cancelled");
    expect(router.canAsk("web:a")).toBe(false);
  });
});
