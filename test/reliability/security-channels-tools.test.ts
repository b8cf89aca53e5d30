/**
 * Category 5 (channels and tools) — access control cannot be sidestepped by internal channel
 * names or by reusing an approval from another channel; the WebSocket channel refuses to open
 * to a reachable address without a token; and the exec bypass corpus and the SSRF corpus from
 * the tools suite run here through the real tools.
 */
import { access, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs } from "../support/requires.js";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import type { InboundMessage } from "../../src/bus/types.js";
import { AccessControl } from "../../src/channels/access/access-control.js";
import { InboundGate } from "../../src/channels/access/inbound-gate.js";
import { PairingStore } from "../../src/channels/access/pairing-store.js";
import { systemClock } from "../../src/channels/clock.js";
import { DeliveryQueue } from "../../src/channels/delivery/delivery-queue.js";
import { parseWebSocketConfig } from "../../src/channels/websocket/config.js";
import { WebSocketChannel } from "../../src/channels/websocket/websocket-channel.js";
import { silentLogger } from "../../src/core/logger.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { outputText } from "../../src/tools/builtin/define-tool.js";
import { SsrfGuard } from "../../src/tools/builtin/ssrf-guard.js";
import type { ResolveHost } from "../../src/tools/builtin/ssrf-guard.js";
import type { Tool } from "../../src/tools/tool.js";
import { ALLOWED_COMMANDS, BLOCKED_COMMANDS } from "../tools/fixtures/exec-corpus.js";
import { ALLOWED_RESOLUTIONS, BLOCKED_LITERAL_URLS, BLOCKED_RESOLUTIONS } from "../tools/fixtures/ssrf-corpus.js";

let root: string;
let workspace: string;
let home: string;
const figures = { internalNames: 0, crossChannel: 0, execBlocked: 0, execAllowed: 0, ssrfBlocked: 0, ssrfAllowed: 0 };

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "nanobot-sec-")));
  workspace = join(root, "ws");
  home = join(root, "home");
  await mkdir(join(workspace, "memory"), { recursive: true });
  await mkdir(join(workspace, "sub"), { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(join(workspace, "notes.txt"), "alpha\nbeta\nfoo\n");
  await writeFile(join(workspace, "memory", "history.jsonl"), '{"role":"user"}\n{"role":"assistant"}\n{"role":"user"}\n');
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
  console.log(
    `security (channels, tools): ${figures.internalNames} internal channel names refused, ${figures.crossChannel} cross-channel approvals refused, ` +
      `exec corpus ${figures.execBlocked} blocked / ${figures.execAllowed} allowed, SSRF corpus ${figures.ssrfBlocked} blocked / ${figures.ssrfAllowed} allowed`,
  );
});

const ctx = { callId: "call-1", workspace: "", turnId: "turn-1" };
const run = async (tool: Tool, args: Record<string, unknown>) => {
  const out = await tool.execute(args, { ...ctx, workspace }, new AbortController().signal);
  return { text: outputText(out), isError: typeof out !== "string" && out.isError === true };
};

describe("channel access cannot be bypassed", () => {
  it.each(["system", "SYSTEM", " cron ", "Subagent", "heartbeat", "Cron"])("a platform channel may not be called %j", (name) => {
    expect(() => new AccessControl({ channel: name, allowFrom: ["*"] })).toThrow(/reserved for internal messages/);
    figures.internalNames++;
  });

  it("the gate stamps its own channel, whatever the platform's metadata claims", async () => {
    const bus = new InProcessBus();
    const gate = new InboundGate({ bus, access: new AccessControl({ channel: "telegram", allowFrom: ["42"] }) });
    const received = bus.consumeInbound();
    const outcome = await gate.receive(
      { id: "m1", chatId: "c1", sender: { id: "42" }, content: "hi", isDirect: true, metadata: { channel: "system" } },
      async () => undefined,
    );
    expect(outcome).toBe("forwarded");
    const message: InboundMessage = await received;
    expect(message.channel).toBe("telegram");
  });

  it("an approval on one channel does not admit the same sender id on another, nor look-alike ids", async () => {
    const store = new PairingStore({ path: join(root, "pairing.json") });
    const telegram = new AccessControl({ channel: "telegram", allowFrom: [], store });
    const asked = await telegram.check({ sender: { id: "42", username: "alice" }, isDirect: true });
    expect(asked.kind).toBe("pair");
    if (asked.kind !== "pair") return;
    await store.approve(asked.code);
    expect(await telegram.check({ sender: { id: "42" }, isDirect: true })).toEqual({ kind: "allow", via: "pairing" });
    const other = new AccessControl({ channel: "discord", allowFrom: [], store });
    for (const sender of [{ id: "42" }, { id: "telegram:42" }, { id: " 42" }, { id: "42 " }]) {
      expect((await other.check({ sender, isDirect: false })).kind, JSON.stringify(sender)).toBe("deny");
      figures.crossChannel++;
    }
    for (const sender of [{ id: "042" }, { id: "42\u200b" }, { id: "4" }, { id: "", username: "alice" }]) {
      expect((await telegram.check({ sender, isDirect: false })).kind, JSON.stringify(sender)).toBe("deny");
      figures.crossChannel++;
    }
  });

  it("a group message from an unknown sender never gets a pairing code", async () => {
    const store = new PairingStore({ path: join(root, "pairing-groups.json") });
    const acl = new AccessControl({ channel: "telegram", allowFrom: [], store });
    expect(await acl.check({ sender: { id: "999" }, isDirect: false })).toEqual({ kind: "deny", reason: "group_unknown_sender" });
    expect((await store.list()).pending).toEqual([]);
  });

  it("the WebSocket channel refuses a reachable address without a token (its empty allowFrom admits everyone)", async () => {
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    for (const host of [lan ?? "192.0.2.10", "0.0.0.0", "nanobot.example.com"]) {
      const bus = new InProcessBus();
      const channel = new WebSocketChannel({
        bus,
        gate: new InboundGate({ bus, access: new AccessControl({ channel: "websocket", allowFrom: ["*"] }) }),
        delivery: new DeliveryQueue(),
        home,
        logger: silentLogger,
        clock: systemClock,
        config: { ...parseWebSocketConfig({ host }), port: 0 },
      });
      try {
        await expect(channel.start(), host).rejects.toThrow(/token is required/);
      } finally {
        await channel.stop();
      }
    }
  });
});

// With restrictToWorkspace, exec fails closed where no sandbox can be had: these run in bwrap.
needs.bwrap().describe("exec bypass corpus through the exec tool", () => {
  it.each(BLOCKED_COMMANDS.map((c) => [c.command, c] as const))("blocks %j", async (_label, entry) => {
    const exec = createBuiltinTools({ workspace, restrictToWorkspace: true, home, exec: { allowPatterns: entry.allowPatterns ?? [] } }).find((t) => t.name === "exec")!;
    const result = await run(exec, { command: entry.command });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(new RegExp(`^Command blocked by ${entry.filter} filter: .+`));
    await expect(access(join(workspace, "sub"))).resolves.toBeUndefined();
    figures.execBlocked++;
  });

  it.each(ALLOWED_COMMANDS.map((c) => [c.command, c] as const))("runs %j", async (_label, entry) => {
    const exec = createBuiltinTools({ workspace, restrictToWorkspace: true, home, exec: { allowPatterns: entry.allowPatterns ?? [] } }).find((t) => t.name === "exec")!;
    const result = await run(exec, { command: entry.command });
    expect(result.text).not.toMatch(/^Command blocked/);
    if (typeof entry.expect === "string") expect(result.text).toContain(entry.expect);
    else expect(result.text).toMatch(entry.expect);
    figures.execAllowed++;
  });
});

describe("SSRF corpus", () => {
  const fakeDns: ResolveHost = async (host) => {
    const answer = BLOCKED_RESOLUTIONS[host] ?? ALLOWED_RESOLUTIONS[host];
    if (!answer) throw new Error(`ENOTFOUND ${host}`);
    return answer;
  };

  it.each(BLOCKED_LITERAL_URLS.map((u) => [u]))("web_fetch refuses %s", async (url) => {
    const fetchTool = createBuiltinTools({ workspace, home }).find((t) => t.name === "web_fetch")!;
    const result = await run(fetchTool, { url });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/blocked|not allowed|refus|private|loopback|metadata|address/i);
    figures.ssrfBlocked++;
  });

  it.each(Object.keys(BLOCKED_RESOLUTIONS).map((h) => [h]))("refuses %s (resolves to a private address)", async (host) => {
    const verdict = await new SsrfGuard({ resolveHost: fakeDns }).checkUrl(`https://${host}/x`);
    expect(verdict.ok).toBe(false);
    figures.ssrfBlocked++;
  });

  it.each(Object.keys(ALLOWED_RESOLUTIONS).map((h) => [h]))("allows %s", async (host) => {
    expect((await new SsrfGuard({ resolveHost: fakeDns }).checkUrl(`https://${host}/`)).ok).toBe(true);
    figures.ssrfAllowed++;
  });
});
