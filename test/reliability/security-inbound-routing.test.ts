/**
 * Category 5 (channels) — a platform message cannot pick the agent that answers it nor the
 * session it lands in. The gate drops routing metadata (`agent`, `sessionKey`, …) and session
 * overrides outside the channel's own namespace, keeps the harmless platform facts, and the
 * AgentLoop answers with the default agent in the sender's own session.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import type { InboundMessage, OutboundMessage } from "../../src/bus/types.js";
import { AccessControl } from "../../src/channels/access/access-control.js";
import { InboundGate } from "../../src/channels/access/inbound-gate.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { namedAgents, startBusLoop, startRuntime, wireMessages, wireText } from "./helpers.js";
import type { RuntimeFixture } from "./helpers.js";

const OTHER = "You are OTHER, the privileged operator agent with shell access.";
let fake: FakeLLM;
let fx: RuntimeFixture;
let loop: AgentLoop | undefined;

beforeEach(async () => {
  fake = await startFakeLLM();
  fx = await startRuntime(fake, {
    extra: namedAgents(OTHER),
  });
});
afterEach(async () => {
  await loop?.stop();
  loop = undefined;
  await fx.close();
  await fake.close();
});

async function until<T>(check: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A Telegram-named gate in front of a running AgentLoop; returns what reached the bus and what went out. */
function telegramPipeline(): { gate: InboundGate; inbound: InboundMessage[]; outbound: OutboundMessage[] } {
  const bus = new InProcessBus();
  const inbound: InboundMessage[] = [];
  const outbound: OutboundMessage[] = [];
  const publish = bus.publishInbound.bind(bus);
  bus.publishInbound = (message) => {
    inbound.push(message);
    return publish(message);
  };
  bus.subscribeOutbound((m) => {
    outbound.push(m);
  });
  loop = new AgentLoop({ runtime: fx.runtime, bus, builtinSkillsDir: `${fx.root}/no-builtin-skills` });
  loop.start();
  const gate = new InboundGate({ bus, access: new AccessControl({ channel: "telegram", allowFrom: ["42"] }) });
  return { gate, inbound, outbound };
}

describe("platform metadata cannot steer routing", () => {
  it('a Telegram message carrying agent: "other" is answered by the default agent, in its own session', async () => {
    const { gate, inbound, outbound } = telegramPipeline();
    fake.enqueue({ text: "default agent here" });
    const outcome = await gate.receive(
      {
        id: "tg-1",
        chatId: "42",
        sender: { id: "42" },
        content: "who are you?",
        isDirect: true,
        metadata: { agent: "other", Agent: "other", sessionKey: "cli:direct", modelPreset: "big", senderId: "1", messageId: 7, chatType: "private", senderName: "Ann" },
      },
      async () => undefined,
    );
    expect(outcome).toBe("forwarded");
    const reply = await until(() => outbound.find((m) => m.kind === "message"), "the reply");
    expect(reply).toMatchObject({ channel: "telegram", chatId: "42", content: "default agent here" });
    // What the provider was sent: the default agent's prompt, not OTHER's.
    const system = wireText(wireMessages(fake.requests[0])[0]!);
    expect(system).toContain("You are nanobot");
    expect(system).not.toContain("You are OTHER");
    // Routing keys are gone, platform facts stay, the gate's own facts win.
    expect(inbound[0]?.metadata).toEqual({ messageId: 7, chatType: "private", senderName: "Ann", isDirect: true });
    expect(inbound[0]?.senderId).toBe("42");
    expect(await fx.runtime.store().loadMessages("cli:direct")).toEqual([]);
    expect((await fx.runtime.store().loadMessages("telegram:42")).map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a session override outside the channel's namespace is ignored; a topic inside it is kept", async () => {
    const { gate, inbound } = telegramPipeline();
    fake.enqueue({ text: "one" }, { text: "two" });
    const send = (id: string, sessionKey: string) =>
      gate.receive({ id, chatId: "42", sender: { id: "42" }, content: `via ${sessionKey}`, isDirect: true, sessionKey }, async () => undefined);
    await send("tg-2", "websocket:victim-chat");
    await send("tg-3", "telegram:42:topic-9");
    await until(() => (fake.requests.length === 2 ? true : undefined), "two requests");
    await loop!.whenIdle();
    expect(inbound.map((m) => m.sessionKey)).toEqual([undefined, "telegram:42:topic-9"]);
    expect(await fx.runtime.store().loadMessages("websocket:victim-chat")).toEqual([]);
    expect((await fx.runtime.store().loadMessages("telegram:42")).map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("an in-process publisher may still name the agent (cron, sub-agents)", async () => {
    const started = startBusLoop(fx.runtime);
    const { bus, outbound } = started;
    loop = started.loop;
    fake.enqueue({ text: "other agent here" });
    await bus.publishInbound({ id: "sys-1", channel: "system", chatId: "job", senderId: "cron", content: "run the job", receivedAt: Date.now(), metadata: { agent: "other" } });
    await until(() => outbound.find((m) => m.kind === "message"), "the reply");
    expect(wireText(wireMessages(fake.requests[0])[0]!)).toContain("You are OTHER");
  });
});
