import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/core/logger.js";

function capture(): { stream: PassThrough; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { stream, lines: () => text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("the logger", () => {
  it("writes only lines at or above its level, with secrets redacted by key and scrubbed from text", async () => {
    const out = capture();
    const log = createLogger({ level: "warn", destination: out.stream });
    log.debug("not written");
    log.info("not written either");
    log.warn("provider failed for https://user:hunter2@example.com/v1", { apiKey: "sk-live-secret-value", attempt: 2 });
    await flush();
    const lines = out.lines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, apiKey: "[redacted]", attempt: 2 });
    expect(JSON.stringify(lines[0])).not.toContain("hunter2");
    expect(JSON.stringify(lines[0])).not.toContain("sk-live-secret-value");
  });

  it("carries a child's bindings and its parent's level", async () => {
    const out = capture();
    const log = createLogger({ level: "info", destination: out.stream }).child({ channel: "telegram" });
    log.debug("skipped");
    log.info("started", { port: 1 });
    await flush();
    expect(out.lines()).toEqual([expect.objectContaining({ level: 30, channel: "telegram", port: 1, msg: "started" })]);
  });
});
