import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "./helpers/harness.js";
import { startTelegram } from "./helpers/telegram-setup.js";
import type { TelegramSetup } from "./helpers/telegram-setup.js";

let setup: TelegramSetup | undefined;

afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

const to = { channel: "telegram", chatId: "42" } as const;

describe("telegram: rate limits and retries", () => {
  it("waits the retry_after of a 429, then sends once", async () => {
    setup = await startTelegram();
    setup.fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 7", parameters: { retry_after: 7 } });
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "r-1", content: "hello" });
    expect(setup.waits).toEqual([7000]);
    expect(setup.fake.messages.map((m) => m.text)).toEqual(["hello"]);
    expect(setup.busErrors).toEqual([]);
  });

  it("retries 5xx at 1 s, 2 s, 4 s and reports the failure after the last attempt", async () => {
    setup = await startTelegram();
    for (let i = 0; i < 4; i++) setup.fake.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" });
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "r-2", content: "hello" });
    expect(setup.waits).toEqual([1000, 2000, 4000]);
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(4);
    expect(setup.busErrors).toHaveLength(1);
    expect(setup.busErrors[0]!.type).toBe("outbound_handler_error");
  });

  it("does not retry a 403 (bot blocked)", async () => {
    setup = await startTelegram();
    setup.fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" });
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "r-3", content: "hello" });
    expect(setup.waits).toEqual([]);
    expect(setup.busErrors).toHaveLength(1);
  });
});

describe("telegram: idempotent delivery", () => {
  it("sends a delivery id once, even when published twice (resumed turn)", async () => {
    setup = await startTelegram();
    const message = { ...to, kind: "message" as const, id: "same-id", content: "only once" };
    await setup.bus.publishOutbound(message);
    await setup.bus.publishOutbound(message);
    await Promise.all([setup.bus.publishOutbound(message), setup.bus.publishOutbound(message)]);
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(1);
  });

  it("a send that failed with 500 is retried and delivered exactly once", async () => {
    setup = await startTelegram();
    setup.fake.failNext("sendMessage", { error_code: 500, description: "Internal Server Error" });
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "x-1", content: "retry me" });
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "x-1", content: "retry me" });
    expect(setup.fake.messages.map((m) => m.text)).toEqual(["retry me"]);
    expect(setup.waits).toEqual([1000]);
  });

  it("after a partial failure, a republished message sends only the missing chunks", async () => {
    setup = await startTelegram();
    const long = `${"a".repeat(3000)}\n\n${"b".repeat(3000)}`;
    // The first chunk goes through; the second fails four times (out of retries).
    setup.fake.failNext("sendMessage", "pass");
    for (let i = 0; i < 4; i++) setup.fake.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" });
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "long-1", content: long });
    expect(setup.fake.messages.map((m) => m.text[0])).toEqual(["a"]);
    expect(setup.busErrors).toHaveLength(1);
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "long-1", content: long });
    expect(setup.fake.messages.map((m) => m.text[0])).toEqual(["a", "b"]);
    expect(setup.fake.messages.map((m) => m.text.length)).toEqual([3000, 3000]);
  });
});

describe("telegram: long messages", () => {
  it("splits a 10,000-character reply into chunks ≤ 4096 keeping code blocks intact", async () => {
    setup = await startTelegram();
    const code = Array.from({ length: 60 }, (_, i) => `console.log("line ${i}");`).join("\n");
    const paragraphs = Array.from({ length: 9 }, (_, i) => `Paragraph ${i} ${"word ".repeat(200)}`.trim());
    const content = [paragraphs.slice(0, 4).join("\n\n"), "```js\n" + code + "\n```", paragraphs.slice(4).join("\n\n")].join("\n\n");
    expect(content.length).toBeGreaterThan(10_000);
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "long-2", content });
    const texts = setup.fake.messages.map((m) => m.text);
    expect(texts.length).toBeGreaterThanOrEqual(3);
    for (const t of texts) expect(t.length).toBeLessThanOrEqual(4096);
    const withCode = texts.filter((t) => t.includes("console.log"));
    expect(withCode).toHaveLength(1);
    expect(withCode[0]).toContain('<pre><code class="language-js">');
    expect(withCode[0]).toContain("</code></pre>");
    expect(withCode[0]!.match(/line \d+/g)).toHaveLength(60);
    expect(texts.join(" ")).toContain("Paragraph 8");
    expect(setup.fake.messages.every((m) => m.parse_mode === "HTML")).toBe(true);
  });
});

describe("telegram: formatting fallback", () => {
  it("resends as plain text when Telegram rejects the HTML", async () => {
    setup = await startTelegram();
    // Crossed emphasis produces badly nested tags; the fake's parser refuses them.
    const content = "**bold *both** italic*";
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "f-1", content });
    const calls = setup.fake.callsOf("sendMessage");
    expect(calls).toHaveLength(2);
    expect(calls[0]!.params.parse_mode).toBe("HTML");
    expect(calls[1]!.params).not.toHaveProperty("parse_mode");
    expect(setup.fake.messages.map((m) => m.text)).toEqual([content]);
  });
});

describe("telegram: media, typing, progress", () => {
  it("sends images with sendPhoto and other files with sendDocument from a path", async () => {
    setup = await startTelegram();
    const png = join(setup.home, "chart.png");
    const pdf = join(setup.home, "report.pdf");
    await writeFile(png, "PNG");
    await writeFile(pdf, "PDF");
    await setup.bus.publishOutbound({
      ...to,
      kind: "message",
      id: "m-1",
      content: "here you go",
      media: [
        { kind: "image", path: png, name: "chart.png" },
        { kind: "document", path: pdf, name: "report.pdf" },
      ],
    });
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(1);
    expect(setup.fake.callsOf("sendPhoto")[0]!.params.photo).toMatchObject({ fileName: "chart.png", content: "PNG" });
    expect(setup.fake.callsOf("sendDocument")[0]!.params.document).toMatchObject({ fileName: "report.pdf", content: "PDF" });
  });

  it("shows typing with sendChatAction and ignores progress unless enabled", async () => {
    setup = await startTelegram();
    await setup.bus.publishOutbound({ ...to, kind: "typing" });
    await setup.bus.publishOutbound({ ...to, kind: "progress", text: "exec: npm test" });
    expect(setup.fake.callsOf("sendChatAction")[0]!.params).toMatchObject({ chat_id: 42, action: "typing" });
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(0);
  });

  it("repeats typing every 4 s until the reply is sent", async () => {
    setup = await startTelegram();
    await setup.bus.publishOutbound({ ...to, kind: "typing" });
    expect(setup.fake.callsOf("sendChatAction")).toHaveLength(1);
    setup.clock.advance(4000);
    await waitFor(() => setup!.fake.callsOf("sendChatAction").length === 2, "the refreshed typing action");
    await setup.bus.publishOutbound({ ...to, kind: "message", id: "t-1", content: "done" });
    setup.clock.advance(8000);
    expect(setup.fake.callsOf("sendChatAction")).toHaveLength(2);
    expect(setup.clock.pendingTimers()).toBe(0);
  });

  it("ignores messages addressed to another channel", async () => {
    setup = await startTelegram();
    await setup.bus.publishOutbound({ channel: "websocket", chatId: "42", kind: "message", id: "o-1", content: "not for telegram" });
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(0);
  });
});
