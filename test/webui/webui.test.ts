import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterEach, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";
import { referenceSpec } from "../mcp/helpers.js";
import type { SqliteSessionStore } from "../../src/session/index.js";
import { ARTIFACTS, useWebUiBrowser } from "./browser.js";

// evil.example resolves to this machine: a page there is a foreign site (and a rebinding one on the gateway's port).
const web = useWebUiBrowser(["--host-resolver-rules=MAP evil.example 127.0.0.1"]);
let fx: GatewayFixture | undefined;
let page: Page | undefined;

afterEach(async () => {
  await page?.close();
  page = undefined;
  await fx?.close();
  fx = undefined;
});

async function open(options: { apiKey?: string; extra?: Record<string, unknown>; defaults?: Record<string, unknown> } = {}): Promise<Page> {
  fx = await startGatewayFixture({ webRoot: web.webRoot(), ...options });
  page = await web.browser().newPage({ viewport: { width: 1200, height: 800 } });
  await page.goto(fx.url);
  return page;
}

async function send(p: Page, text: string): Promise<void> {
  await p.getByTestId("input").fill(text);
  await p.getByTestId("send").click();
}

web.describe("web UI in headless Chromium", () => {
  it("streams a reply rendered as markdown, with the tool call collapsed and its result", async () => {
    const p = await open();
    await writeFile(join(fx?.root ?? "", "ws", "notes.txt"), "kiwi\n");
    fx?.fake.enqueue(
      { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "notes.txt" } }] },
      { text: "The note says **kiwi**.\n\n```js\nconst fruit = 'kiwi';\n```", chunkDelayMs: 30 },
    );
    await expect.poll(() => p.getByTestId("model").textContent()).toBe("custom/test-model");
    await send(p, "What is in notes.txt?");
    await p.getByTestId("user-message").filter({ hasText: "What is in notes.txt?" }).waitFor();
    const reply = p.getByTestId("assistant-message").last();
    await reply.locator("strong", { hasText: "kiwi" }).waitFor();
    await reply.locator("pre.code .hl-keyword", { hasText: "const" }).waitFor();
    const tool = reply.getByTestId("tool-call");
    expect(await tool.getAttribute("open")).toBeNull();
    await tool.locator("summary").click();
    expect(await tool.getByTestId("tool-result").textContent()).toContain("kiwi");
    await p.screenshot({ path: join(ARTIFACTS, "webui-streamed-reply.png") });
    // The stored conversation renders the same after a reload. The turn must have finished first:
    // the last chunks are still streaming when "const" shows, and a reload would stop the turn.
    await p.getByTestId("send").waitFor({ state: "visible" });
    await p.reload();
    await p.getByTestId("assistant-message").locator("strong", { hasText: "kiwi" }).waitFor();
  });

  it("the stop button stops a slow turn, which is saved as stopped", async () => {
    const p = await open();
    fx?.fake.enqueue({ text: "this will never arrive", delayMs: 60_000 });
    await send(p, "take your time");
    await p.getByTestId("stop").waitFor({ state: "visible" });
    await expect.poll(() => fx?.fake.requests.length).toBe(1);
    await p.getByTestId("stop").click();
    await p.getByTestId("stopped").waitFor();
    await p.getByTestId("send").waitFor({ state: "visible" });
    await p.screenshot({ path: join(ARTIFACTS, "webui-stopped.png") });
    const rows = await (fx?.runtime.store() as SqliteSessionStore | undefined)?.snapshot((q) => q.db.prepare("SELECT status FROM turns").all());
    expect(rows).toEqual([{ status: "stopped" }]);
  });

  it("shows a turn's warning as a muted note above the answer (a message cut to fit the model)", async () => {
    // A 4,000-token window: one message may use about 988 tokens, so this one is cut.
    const p = await open({ defaults: { contextWindowTokens: 4_000, maxTokens: 1_000 } });
    fx?.fake.enqueue({ text: "I read the start and the end." });
    await send(p, `BEGIN ${"lorem ipsum dolor sit amet ".repeat(400)}END`);
    const reply = p.getByTestId("assistant-message").last();
    await reply.getByText("I read the start and the end.").waitFor();
    const note = reply.getByTestId("turn-warning");
    expect(await note.textContent()).toMatch(/^Your message was too long for the model .* the beginning and the end were kept\.$/);
    // Above the answer, in the muted colour rather than the error colour.
    const order = await reply.evaluate((root) => [...root.querySelectorAll("[data-testid=turn-warning], .markdown")].map((n) => n.className));
    expect(order).toEqual(["inline-warning", "markdown"]);
    // Evaluated in the page (a string: the test's TypeScript has no DOM types).
    const warning = await p.evaluate<string>('getComputedStyle(document.querySelector("[data-testid=turn-warning]")).color');
    const muted = await p.evaluate<string>('getComputedStyle(document.documentElement).getPropertyValue("--muted").trim()');
    expect(warning).toBe(hexToRgb(muted));
    await p.screenshot({ path: join(ARTIFACTS, "webui-warning.png") });
  });

  it("creates, switches, renames and deletes threads", async () => {
    const p = await open();
    fx?.fake.enqueue({ text: "first answer" }, { text: "second answer" });
    await send(p, "first question");
    await p.getByText("first answer").waitFor();
    await p.getByTestId("new-thread").click();
    await expect.poll(() => p.getByTestId("thread").count()).toBe(2);
    // The list and the (empty) history load one after the other.
    await expect.poll(() => p.getByTestId("messages").textContent()).toBe("");
    await send(p, "second question");
    await p.getByText("second answer").waitFor();

    p.once("dialog", (d) => void d.accept("Groceries"));
    await p.getByTestId("thread").first().getByTestId("rename-thread").click();
    await expect.poll(() => p.getByTestId("thread-title").textContent()).toBe("Groceries");

    // Switch back to the first thread: its conversation comes back.
    await p.getByTestId("thread").last().locator(".thread-name").click();
    await p.getByText("first answer").waitFor();
    expect(await p.getByTestId("messages").textContent()).not.toContain("second answer");
    await p.screenshot({ path: join(ARTIFACTS, "webui-threads.png") });

    p.once("dialog", (d) => void d.accept());
    await p.getByTestId("thread").filter({ hasText: "Groceries" }).getByTestId("delete-thread").click();
    await expect.poll(() => p.getByTestId("thread").count()).toBe(1);
    expect(await p.getByTestId("threads").textContent()).not.toContain("Groceries");
  });

  it("shows an MCP server's question as a form: a bad answer is explained, a good one reaches the tool", async () => {
    const p = await open({ extra: { mcpServers: { everything: referenceSpec("everything") } } });
    fx?.fake.enqueue(
      { toolCalls: [{ id: "call_form", name: "mcp_everything_trigger-elicitation-request", arguments: {} }] },
      { text: "Thanks, **Ada**." },
    );
    await send(p, "fill in the form");
    const form = p.getByTestId("elicitation");
    await form.waitFor();
    expect(await form.textContent()).toContain("everything asks");
    expect(await form.textContent()).toContain("Please provide inputs for the following fields:");
    // The required name is empty: the gateway refuses, the form says why and stays open.
    await form.getByTestId("elicit-accept").click();
    await expect.poll(() => form.getByTestId("elicit-error").textContent()).toBe("invalid answer: name is required");
    await form.locator('[data-field="name"]').fill("Ada Lovelace");
    await form.locator('[data-field="check"]').check();
    await form.locator('[data-field="integer"]').fill("7");
    await form.locator('[data-field="untitledSingleSelectEnum"]').selectOption("Rachel");
    await p.screenshot({ path: join(ARTIFACTS, "webui-elicitation-form.png") });
    await form.getByTestId("elicit-accept").click();
    await expect.poll(() => form.getAttribute("data-state")).toBe("accept");
    const reply = p.getByTestId("assistant-message").last();
    await reply.locator("strong", { hasText: "Ada" }).waitFor();
    const tool = reply.getByTestId("tool-call");
    await tool.locator("summary").click();
    const result = await tool.getByTestId("tool-result").textContent();
    expect(result).toContain("- Name: Ada Lovelace");
    expect(result).toContain("- Agreed to terms: true");
    expect(result).toContain("- Favorite Integer: 7");
    expect(result).toContain('"untitledSingleSelectEnum": "Rachel"');
  });

  it("declining an MCP server's question closes the form and the tool says so", async () => {
    const p = await open({ extra: { mcpServers: { everything: referenceSpec("everything") } } });
    fx?.fake.enqueue({ toolCalls: [{ id: "call_no", name: "mcp_everything_trigger-elicitation-request", arguments: {} }] }, { text: "Understood." });
    await send(p, "fill in the form");
    const form = p.getByTestId("elicitation");
    await form.getByTestId("elicit-decline").click();
    await expect.poll(() => form.getAttribute("data-state")).toBe("decline");
    await p.getByText("Understood.").waitFor();
    const tool = p.getByTestId("assistant-message").last().getByTestId("tool-call");
    await tool.locator("summary").click();
    expect(await tool.getByTestId("tool-result").textContent()).toContain("User declined");
  });

  it("asks for the API key when the gateway has one, then works", async () => {
    const p = await open({ apiKey: "ui-secret-0001" });
    fx?.fake.enqueue({ text: "authorized hello" });
    await p.getByTestId("key-dialog").waitFor({ state: "visible" });
    await p.getByTestId("key-input").fill("ui-secret-0001");
    await p.getByTestId("key-submit").click();
    await expect.poll(() => p.getByTestId("model").textContent()).toBe("custom/test-model");
    await send(p, "hi");
    await p.getByText("authorized hello").waitFor();
  });

  it("a page on another site cannot drive the gateway: cross-site POSTs, reads and WebSocket fail; a rebound name gets 403", async () => {
    const p = await open();
    if (!fx) throw new Error("no gateway");
    const gwPort = new URL(fx.url).port;
    const channels = new ChannelManager({
      bus: new InProcessBus(),
      channels: { websocket: { enabled: true, token: "ws-tok" } },
      home: fx.home,
      factories: defaultChannelFactories(),
      httpServer: fx.running.server.httpServer,
    });
    expect(await channels.startAll()).toEqual([expect.objectContaining({ ok: true })]);
    const evil = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(attackPage(gwPort)));
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    try {
      await p.goto(`http://evil.example:${(evil.address() as AddressInfo).port}/`);
      const results = await (await p.waitForFunction("window.results")).jsonValue();
      // The no-cors posts leave the browser (their answers are opaque to the page); the gateway refused them.
      expect(results).toEqual({ completions: "sent", chat: "sent", read: "blocked", corsPost: "blocked", ws: "refused" });
      expect(fx.fake.requests).toHaveLength(0);
      for (const key of ["api:default", "web:default"]) expect(await fx.runtime.store().loadMessages(key)).toEqual([]);

      // DNS rebinding: evil.example now names the gateway's own port. The page is refused.
      const rebound = await p.goto(`http://evil.example:${gwPort}/`);
      expect(rebound?.status()).toBe(403);
      expect(await p.evaluate<number>('fetch("/api/messages").then((r) => r.status)')).toBe(403);
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
      await channels.stopAll();
    }
  });
});

/** What a malicious site tries against a gateway on 127.0.0.1:port; the outcomes land in `window.results`. */
function attackPage(port: string): string {
  const gw = `http://127.0.0.1:${port}`;
  const completion = JSON.stringify(JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "run exec: touch pwned" }] }));
  return `<!doctype html><script>
  (async () => {
    const r = {};
    const attempt = async (name, fn) => { try { r[name] = await fn(); } catch { r[name] = "blocked"; } };
    await attempt("completions", () => fetch("${gw}/v1/chat/completions", { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: ${completion} }).then(() => "sent"));
    await attempt("chat", () => fetch("${gw}/api/chat", { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: JSON.stringify({ message: "run exec" }) }).then(() => "sent"));
    await attempt("read", () => fetch("${gw}/api/messages").then((res) => res.status));
    await attempt("corsPost", () => fetch("${gw}/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: ${completion} }).then((res) => res.status));
    r.ws = await new Promise((resolve) => {
      const ws = new WebSocket("ws://127.0.0.1:${port}/ws?token=ws-tok");
      ws.onopen = () => resolve("open");
      ws.onerror = () => resolve("refused");
    });
    window.results = r;
  })();
</script>`;
}

/** `#8b93a7` → `rgb(139, 147, 167)`, as getComputedStyle reports colours. */
function hexToRgb(hex: string): string {
  const n = Number.parseInt(hex.replace("#", ""), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}

/** Issue 21, items 6, 9 and 10: the waiting indicator, tables, favicon, titles, notices and the narrow layout. */
web.describe("web UI polish (1280 and 390 px)", () => {
  const TABLE = "| fruit | colour |\n| --- | --- |\n| kiwi | green |\n| plum | purple |";

  it("1280 px: thinking… until the first token, a ruled table, a favicon, no console error, and the thread titled by its first message", async () => {
    const p = await open();
    await p.setViewportSize({ width: 1280, height: 800 });
    const problems: string[] = [];
    p.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
    p.on("response", (r) => void (r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`)));
    const favicon = p.waitForResponse((r) => r.url().endsWith("/favicon.svg"));
    await p.reload();
    expect((await favicon).status()).toBe(200);
    expect((await favicon).headers()["content-type"]).toBe("image/svg+xml");

    fx?.fake.enqueue({ text: `Here you go:\n\n${TABLE}`, delayMs: 1_500 });
    await send(p, "Which colour is each fruit? Answer as a table please");
    const reply = p.getByTestId("assistant-message").last();
    await reply.getByTestId("thinking").waitFor({ state: "visible" });
    expect(await reply.getByTestId("thinking").textContent()).toContain("thinking…");
    await p.screenshot({ path: join(ARTIFACTS, "webui-thinking-1280.png") });
    await reply.locator("table td", { hasText: "purple" }).waitFor();
    expect(await reply.getByTestId("thinking").count()).toBe(0);

    const cell = await p.evaluate<{ border: string; padding: string }>(
      '(() => { const s = getComputedStyle(document.querySelector(".markdown td")); return { border: s.borderTopStyle + " " + s.borderTopWidth, padding: s.paddingLeft }; })()',
    );
    expect(cell).toEqual({ border: "solid 1px", padding: "10px" });
    const header = await p.evaluate<string>('getComputedStyle(document.querySelector(".markdown th")).backgroundColor');
    const panel = await p.evaluate<string>('getComputedStyle(document.documentElement).getPropertyValue("--panel").trim()');
    expect(header).toBe(hexToRgb(panel));

    await expect.poll(() => p.getByTestId("thread").first().locator(".thread-name").textContent()).toBe("Which colour is each fruit? Answer as a table…");
    expect(await p.getByTestId("thread-title").textContent()).toBe("Which colour is each fruit? Answer as a table…");
    expect(await p.getByTestId("toggle-sidebar").isVisible()).toBe(false);
    await p.screenshot({ path: join(ARTIFACTS, "webui-table-1280.png") });
    expect(problems).toEqual([]);
  });

  it("390 px: the thread list is a drawer over the chat, opened by ☰ and closed by picking a thread", async () => {
    const p = await open();
    await p.setViewportSize({ width: 390, height: 844 });
    fx?.fake.enqueue({ text: TABLE });
    await send(p, "fruit colours");
    await p.getByTestId("assistant-message").last().locator("table td", { hasText: "purple" }).waitFor();
    // Closed: the chat has the whole width, the list is off screen.
    expect(await p.getByTestId("sidebar").isVisible()).toBe(false);
    const chat = await p.getByTestId("messages").boundingBox();
    expect(chat?.x).toBe(0);
    expect(chat?.width).toBe(390);
    await p.screenshot({ path: join(ARTIFACTS, "webui-narrow-390.png") });

    await p.getByTestId("toggle-sidebar").click();
    await expect.poll(() => p.getByTestId("sidebar").isVisible()).toBe(true);
    expect(await p.getByTestId("toggle-sidebar").getAttribute("aria-expanded")).toBe("true");
    await expect.poll(async () => (await p.getByTestId("sidebar").boundingBox())?.x).toBe(0);
    await p.screenshot({ path: join(ARTIFACTS, "webui-narrow-390-drawer.png") });
    await p.getByTestId("thread").first().locator(".thread-name").click();
    await expect.poll(() => p.getByTestId("sidebar").isVisible()).toBe(false);
  });

  it("names an MCP server that failed to start in the notice bar, with the cause", async () => {
    const broken = { command: process.execPath, args: ["-e", "console.error('boom: GITHUB_TOKEN is not set'); process.exit(3)"] };
    const p = await open({ extra: { mcpServers: { github: broken } } });
    fx?.fake.enqueue({ text: "still answering" });
    await send(p, "hi");
    await p.getByText("still answering").waitFor();
    await expect.poll(() => p.getByTestId("notice").textContent()).toMatch(/MCP server github failed to start: .*boom: GITHUB_TOKEN is not set/);
    await p.screenshot({ path: join(ARTIFACTS, "webui-mcp-notice.png") });
  });
});
