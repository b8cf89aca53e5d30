import { afterEach, describe, expect, it } from "vitest";
import { createHarness, finalMessages, gateTool, roles, waitFor } from "./helpers.js";
import type { LoopHarness } from "./helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const spawnCall = { id: "s1", name: "spawn", arguments: { task: "Count the words in 'a b c'", label: "counter" } };

describe("spawn", () => {
  it("injects a background sub-agent's result into the origin session's running turn", async () => {
    const gate = gateTool();
    h = await createHarness({ tools: [gate.tool] });
    h.fake.enqueue({ toolCalls: [spawnCall, { id: "w1", name: "wait_here", arguments: {} }] }, { text: "There are 3 words." });
    await h.send("count words in the background");
    await gate.started;
    // The sub-agent ran (second request) and its result waits in the session's queue.
    await waitFor(() => h!.loop.sessionState("telegram:42").queued === 1);
    const subRequest = roles(h.fake.requests[1]);
    expect(subRequest.at(-1)).toEqual(["user", "Count the words in 'a b c'"]);
    const subTools = ((h.fake.requests[1]?.body.tools as Array<{ function: { name: string } }> | undefined) ?? []).map((t) => t.function.name);
    expect(subTools).not.toContain("spawn");
    expect(subTools).not.toContain("message");
    h.fake.enqueue({ text: "Your sub-agent counted 3 words." });
    gate.release();
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    const notice = roles(h.fake.requests[2]).at(-1);
    expect(notice?.[0]).toBe("user");
    expect(notice?.[1]).toBe('[Sub-agent "counter" completed]\nTask: Count the words in \'a b c\'\nResult:\nThere are 3 words.');
    expect(finalMessages(h.outbound).map((m) => m.content)).toEqual(["Your sub-agent counted 3 words."]);
    h.fake.assertDone();
  });

  it("starts a system turn in the origin session when it is idle, replying on the origin chat", async () => {
    const mainGate = gateTool("wait_main");
    const subGate = gateTool("wait_sub");
    h = await createHarness({ tools: [mainGate.tool, subGate.tool] });
    h.fake.enqueue(
      { toolCalls: [spawnCall, { id: "w1", name: "wait_main", arguments: {} }] },
      { toolCalls: [{ id: "w2", name: "wait_sub", arguments: {} }] },
    );
    await h.send("count in the background");
    await mainGate.started;
    await subGate.started;
    h.fake.enqueue({ text: "Started a sub-agent." });
    mainGate.release();
    await waitFor(() => finalMessages(h!.outbound).length === 1 && !h!.loop.sessionState("telegram:42").running);
    h.fake.enqueue({ text: "3 words." }, { text: "Result is in: 3 words." });
    subGate.release();
    await waitFor(() => finalMessages(h!.outbound).length === 2);
    expect(finalMessages(h.outbound).map((m) => [m.chatId, m.content])).toEqual([
      ["42", "Started a sub-agent."],
      ["42", "Result is in: 3 words."],
    ]);
    expect(roles(h.fake.requests[4]).at(-1)?.[1]).toMatch(/^\[Sub-agent "counter" completed\]/);
    h.fake.assertDone();
  });

  it("/stop cancels the session's sub-agents", async () => {
    const mainGate = gateTool("wait_main");
    const subGate = gateTool("wait_sub");
    h = await createHarness({ tools: [mainGate.tool, subGate.tool], start: false });
    h.fake.enqueue(
      { toolCalls: [spawnCall, { id: "w1", name: "wait_main", arguments: {} }] },
      { toolCalls: [{ id: "w2", name: "wait_sub", arguments: {} }] },
    );
    const turn = h.loop.process({ sessionKey: "cli:x", content: "spawn it" });
    await mainGate.started;
    await subGate.started;
    h.fake.enqueue({ text: "Started." });
    mainGate.release();
    expect((await turn).content).toBe("Started.");
    expect(h.loop.subagents.count("cli:x")).toBe(1);
    expect((await h.loop.process({ sessionKey: "cli:x", content: "/stop" })).content).toBe("Stopped 1 task(s).");
    await h.loop.whenIdle();
    expect(h.loop.subagents.count()).toBe(0);
    // A stopped sub-agent reports nothing back.
    expect(h.fake.requests).toHaveLength(3);
    h.fake.assertDone();
  });
});
