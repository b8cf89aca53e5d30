/**
 * The Python nanobot's idle-compaction keys on the AgentLoop built from config:
 * `sessionTtlMinutes` / `idleCompactAfterMinutes` (0 = never) and `idleCompactCheckIntervalSeconds`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/message-helpers.js";
import type { Message } from "../../src/core/messages.js";
import { createHarness, waitFor } from "./helpers.js";
import type { LoopHarness } from "./helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function seedIdleSession(harness: LoopHarness, key = "telegram:idle"): Promise<void> {
  const msgs: Message[] = [];
  for (let i = 0; i < 10; i++) msgs.push(userMessage(`q${i}`), assistantMessage(`a${i}`));
  await harness.runtime.store().appendMessages(key, msgs);
}

describe("idle compaction settings", () => {
  it("sessionTtlMinutes: 30 waits 30 minutes, not the default 15", async () => {
    h = await createHarness({ start: false, defaults: { sessionTtlMinutes: 30 } });
    await seedIdleSession(h);
    expect(await h.loop.compactIdleSessions(Date.now() + 20 * 60_000)).toEqual([]);
    h.fake.enqueue({ text: "Idle summary." });
    expect(await h.loop.compactIdleSessions(Date.now() + 31 * 60_000)).toEqual(["telegram:idle"]);
    h.fake.assertDone();
  });

  it("idleCompactAfterMinutes (the newer name) works the same; 0 turns it off", async () => {
    h = await createHarness({ start: false, defaults: { idleCompactAfterMinutes: 0 } });
    await seedIdleSession(h);
    expect(await h.loop.compactIdleSessions(Date.now() + 24 * 60 * 60_000)).toEqual([]);
    expect(h.fake.requests).toHaveLength(0);
  });

  it("idleCompactCheckIntervalSeconds sets how often the running loop looks", async () => {
    h = await createHarness({ start: false, defaults: { sessionTtlMinutes: 1, idleCompactCheckIntervalSeconds: 1 } });
    await seedIdleSession(h);
    // The loop's timer reads the wall clock: two minutes on, the seeded session is idle. With the
    // default 60 s between looks nothing would happen within the wait below.
    h.fake.enqueue({ text: "Idle summary." });
    const realNow = Date.now;
    Date.now = () => realNow() + 2 * 60_000;
    try {
      h.loop.start();
      await waitFor(() => h!.fake.requests.length === 1, 5_000);
    } finally {
      Date.now = realNow;
    }
    h.fake.assertDone();
  });
});
