import { afterEach, describe, expect, it } from "vitest";
import { MAX_GOAL_ROUNDS, readGoal } from "../../src/agent/goals.js";
import { createHarness, finalMessages, gateTool, roles, waitFor } from "./helpers.js";
import type { LoopHarness } from "./helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const goalOf = async (harness: LoopHarness, key: string) => readGoal((await harness.runtime.store().getSession(key))?.metadata);

describe("sustained goals", () => {
  it("/goal keeps the loop working round after round until the agent marks it done", async () => {
    h = await createHarness();
    h.fake.enqueue(
      { text: "Haiku one." },
      { text: "Haiku two." },
      { toolCalls: [{ id: "g1", name: "update_goal", arguments: { status: "done", note: "three haikus written" } }] },
      { text: "Haiku three. All done." },
    );
    await h.send("/goal write three haikus");
    await waitFor(() => finalMessages(h!.outbound).length === 4);
    await h.loop.whenIdle();
    expect(finalMessages(h.outbound).map((m) => m.content)).toEqual([
      "Goal set: write three haikus\nI will keep working on it after each answer until it is done (/goal clear or /stop to end).",
      "Haiku one.",
      "Haiku two.",
      "Haiku three. All done.",
    ]);
    expect(roles(h.fake.requests[0]).at(-1)?.[1]).toBe(
      "[Goal] Continue working on the goal: write three haikus\nRound 1 of 12. Take the next concrete step; call update_goal when the goal is done.",
    );
    expect(roles(h.fake.requests[0])[0]?.[1]).toContain("# Active goal\n\nwrite three haikus");
    expect(await goalOf(h, "telegram:42")).toMatchObject({ status: "done", rounds: 3, note: "three haikus written" });
    h.fake.assertDone();
  });

  it(`stops after ${MAX_GOAL_ROUNDS} continuation rounds`, async () => {
    h = await createHarness({ start: false });
    for (let i = 0; i <= MAX_GOAL_ROUNDS; i++) h.fake.enqueue({ text: `step ${i}` });
    await h.loop.process({ sessionKey: "cli:g", content: "/goal count forever" });
    await waitFor(() => h!.fake.requests.length === MAX_GOAL_ROUNDS);
    await h.loop.whenIdle();
    expect(h.fake.requests).toHaveLength(MAX_GOAL_ROUNDS);
    expect(await goalOf(h, "cli:g")).toMatchObject({ status: "exhausted", rounds: MAX_GOAL_ROUNDS });
    expect(h.fake.pending()).toBe(1);
  });

  it("/stop ends a goal's work", async () => {
    const gate = gateTool();
    h = await createHarness({ tools: [gate.tool] });
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
    await h.send("/goal keep checking");
    await gate.started;
    await h.send("/stop");
    await waitFor(() => finalMessages(h!.outbound).some((m) => m.content.startsWith("Stopped")));
    await h.loop.whenIdle();
    expect(h.fake.requests).toHaveLength(1);
    expect(finalMessages(h.outbound).at(-1)?.content).toBe("Stopped 1 task(s).");
    expect(await goalOf(h, "telegram:42")).toMatchObject({ status: "abandoned" });
  });

  it("a turn without a goal reads the session's metadata once; one whose model calls create_goal goes on to round 1", async () => {
    h = await createHarness({ start: false });
    const store = h.runtime.store();
    const read = store.sessionMetadata.bind(store);
    let reads = 0;
    store.sessionMetadata = (key) => (reads++, read(key));
    h.fake.enqueue({ text: "Plain answer." });
    await h.loop.process({ sessionKey: "cli:plain", content: "hello" });
    await h.loop.whenIdle();
    expect(reads).toBe(1);
    h.fake.enqueue(
      { toolCalls: [{ id: "g1", name: "create_goal", arguments: { objective: "tidy the notes" } }] },
      { text: "Goal set." },
      { toolCalls: [{ id: "g2", name: "update_goal", arguments: { status: "done" } }] },
      { text: "Tidied." },
    );
    await h.loop.process({ sessionKey: "cli:plain", content: "keep tidying my notes" });
    await waitFor(() => h!.fake.requests.length === 5);
    await h.loop.whenIdle();
    expect(roles(h.fake.requests[3]).at(-1)?.[1]).toMatch(/^\[Goal\] Continue working on the goal: tidy the notes/);
    expect(await goalOf(h, "cli:plain")).toMatchObject({ status: "done", rounds: 1 });
    h.fake.assertDone();
    store.sessionMetadata = read;
  });
});
