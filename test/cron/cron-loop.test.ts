import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCronRunner, installSystemJobs } from "../../src/agent/cron-bridge.js";
import { CronService } from "../../src/cron/cron-service.js";
import { cronJobsPath } from "../../src/cron/cron-store.js";
import { HEARTBEAT_JOB_ID } from "../../src/cron/heartbeat.js";
import { createHarness, finalMessages, gateTool, roles, waitFor } from "../agent/helpers.js";
import type { LoopHarness } from "../agent/helpers.js";
import type { Tool } from "../../src/tools/tool.js";
import { installSpanExporter } from "../../src/core/tracing/tracer.js";
import type { FinishedSpan } from "../../src/core/tracing/tracer.js";
import { FakeClock } from "./fake-clock.js";

let h: LoopHarness | undefined;
let cron: CronService | undefined;
afterEach(async () => {
  cron?.stop();
  await h?.close();
  h = undefined;
  cron = undefined;
});

const T0 = Date.UTC(2026, 0, 15, 8, 0, 0);

async function setup(tools: Tool[] = []): Promise<{ h: LoopHarness; cron: CronService; clock: FakeClock }> {
  h = await createHarness({ tools });
  const clock = new FakeClock(T0);
  cron = new CronService({ path: cronJobsPath(h.home), clock, run: createCronRunner({ loop: h.loop, bus: h.bus }) });
  h.loop.useCron(cron);
  cron.start();
  return { h, cron, clock };
}

describe("cron through the AgentLoop", () => {
  it("an every job fires on the fake clock, runs in its session and replies to its chat", async () => {
    const { h, cron, clock } = await setup();
    const job = cron.add({ name: "water", message: "Remind me to drink water.", schedule: { kind: "every", everyMs: 3_600_000 }, sessionKey: "telegram:42", channel: "telegram", chatId: "42" });
    h.fake.enqueue({ text: "Time to drink some water!" });
    clock.advance(3_600_000);
    await cron.idle();
    expect(roles(h.fake.requests[0]).at(-1)).toEqual(["user", '[Scheduled task "water"]\nRemind me to drink water.']);
    expect(finalMessages(h.outbound).map((m) => [m.chatId, m.content])).toEqual([["42", "Time to drink some water!"]]);
    expect(cron.get(job.id)?.runs).toMatchObject([{ status: "ok", detail: "Time to drink some water!" }]);
    h.fake.assertDone();
  });

  it("a job is deferred while its session is busy and runs as its own turn afterwards", async () => {
    const gate = gateTool();
    const { h, cron, clock } = await setup([gate.tool]);
    cron.add({ name: "ping", message: "ping", schedule: { kind: "every", everyMs: 60_000 }, sessionKey: "telegram:42" });
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
    await h.send("long task");
    await gate.started;
    clock.advance(60_000);
    await waitFor(() => h.loop.sessionState("telegram:42").queued === 1);
    expect(h.fake.requests).toHaveLength(1);
    h.fake.enqueue({ text: "long task done" }, { text: "pong" });
    gate.release();
    await cron.idle();
    expect(h.fake.requests).toHaveLength(3);
    expect(roles(h.fake.requests[2]).at(-1)?.[1]).toBe('[Scheduled task "ping"]\nping');
    // The cron turn replays the finished chat turn: it ran after it, not inside it.
    expect(roles(h.fake.requests[2]).map(([role]) => role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
  });

  it("the agent schedules a job for its own conversation with the cron tool", async () => {
    const { h, cron } = await setup();
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "cron", arguments: { action: "add", message: "Stretch!", every: 1800, name: "stretch" } }] }, { text: "Scheduled." });
    await h.send("remind me to stretch every 30 minutes");
    await waitFor(() => finalMessages(h.outbound).length === 1);
    const jobs = cron.list({ sessionKey: "telegram:42" });
    expect(jobs).toMatchObject([{ name: "stretch", message: "Stretch!", channel: "telegram", chatId: "42", schedule: { kind: "every", everyMs: 1_800_000 } }]);
  });
});

describe("heartbeat", () => {
  it("makes no LLM call when HEARTBEAT.md has no tasks", async () => {
    const { h, cron, clock } = await setup();
    installSystemJobs(cron, h.runtime.config);
    clock.advance(30 * 60_000);
    await cron.idle();
    expect(h.fake.requests).toHaveLength(0);
    expect(cron.get(HEARTBEAT_JOB_ID)?.runs).toMatchObject([{ status: "skipped", detail: "no tasks in HEARTBEAT.md" }]);
  });

  it("runs the tasks and reports to the latest chat only when the evaluator says NOTIFY", async () => {
    const { h, cron, clock } = await setup();
    installSystemJobs(cron, h.runtime.config);
    h.fake.enqueue({ text: "hello" });
    await h.send("hi", { chatId: "7" });
    await waitFor(() => finalMessages(h.outbound).length === 1);
    await writeFile(join(h.workspace, "HEARTBEAT.md"), "# Heartbeat\n\n- check whether the build is green\n");
    h.fake.enqueue({ text: "Nothing changed." }, { text: "SILENT" });
    clock.advance(30 * 60_000);
    await cron.idle();
    expect(finalMessages(h.outbound)).toHaveLength(1);
    h.fake.enqueue({ text: "The build is red since 10:02!" }, { text: "NOTIFY" });
    clock.advance(30 * 60_000);
    await cron.idle();
    expect(finalMessages(h.outbound).map((m) => [m.chatId, m.content])).toEqual([
      ["7", "hello"],
      ["7", "The build is red since 10:02!"],
    ]);
    expect(roles(h.fake.requests[1]).at(-1)?.[1]).toContain("- check whether the build is green");
    h.fake.assertDone();
  });

  it("traces the evaluator's check as a model call marked heartbeat", async () => {
    const spans: FinishedSpan[] = [];
    const uninstall = installSpanExporter({ export: (span) => void spans.push(span), shutdown: async () => undefined });
    try {
      const { h, cron, clock } = await setup();
      installSystemJobs(cron, h.runtime.config);
      await writeFile(join(h.workspace, "HEARTBEAT.md"), "# Heartbeat\n\n- check whether the build is green\n");
      h.fake.enqueue({ text: "Nothing changed." }, { text: "SILENT" });
      clock.advance(30 * 60_000);
      await cron.idle();
      h.fake.assertDone();
    } finally {
      uninstall();
    }
    const checks = spans.filter((s) => s.attributes["nanobot.purpose"] === "heartbeat");
    expect(checks.map((s) => [s.name, s.attributes["gen_ai.request.max_tokens"]])).toEqual([["chat test-model", 16]]);
  });

  it("reports to the chat of a thread's session (the chat its turn recorded), not to the session key", async () => {
    const { h, cron, clock } = await setup();
    installSystemJobs(cron, h.runtime.config);
    h.fake.enqueue({ text: "hello in the thread" });
    // A Slack thread: its own session, keyed by channel and thread; the chat is the channel C1.
    await h.bus.publishInbound({ id: "in-thread", channel: "slack", chatId: "C1", senderId: "U1", content: "hi", receivedAt: Date.now(), sessionKey: "slack:C1:1700000000.000100" });
    await waitFor(() => finalMessages(h.outbound).length === 1);
    expect((await h.runtime.store().sessionMetadata("slack:C1:1700000000.000100"))?.chat).toEqual({ channel: "slack", chatId: "C1" });
    await writeFile(join(h.workspace, "HEARTBEAT.md"), "# Heartbeat\n\n- check the build\n");
    h.fake.enqueue({ text: "The build is red." }, { text: "NOTIFY" });
    clock.advance(30 * 60_000);
    await cron.idle();
    expect(finalMessages(h.outbound).map((m) => [m.channel, m.chatId, m.content])).toEqual([
      ["slack", "C1", "hello in the thread"],
      ["slack", "C1", "The build is red."],
    ]);
  });
});
