import { describe, expect, it } from "vitest";
import { assistantMessage, toolMessage, userMessage } from "../../src/core/message-helpers.js";
import type { UserMessage } from "../../src/core/messages.js";
import { createTokenEstimator, encodingForModel, estimateMessages, imageTokens, readImageSize } from "../../src/engine/index.js";
import { countSliced } from "../../src/engine/tokens/tokenizer.js";

function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write("IHDR", 12, "ascii");
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc0, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof]);
}

const imageMessage = (data: string): UserMessage => userMessage([{ type: "image", mimeType: "image/png", data }]);

describe("encoding choice", () => {
  it("uses o200k for gpt-4o, gpt-5 and o-series, cl100k otherwise", () => {
    expect(encodingForModel("gpt-4o-mini")).toBe("o200k_base");
    expect(encodingForModel("openai/gpt-5")).toBe("o200k_base");
    expect(encodingForModel("o3-mini")).toBe("o200k_base");
    expect(encodingForModel("gpt-4")).toBe("cl100k_base");
    expect(encodingForModel("claude-sonnet-4")).toBe("cl100k_base");
  });
});

describe("image dimensions and tokens", () => {
  it("reads PNG and JPEG headers", () => {
    expect(readImageSize(png(800, 600))).toEqual({ width: 800, height: 600 });
    expect(readImageSize(jpeg(1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(readImageSize(Buffer.from("not an image"))).toBeUndefined();
  });

  it("charges w·h/750 after scaling the long edge to 1568 px, 1600 when undecodable", () => {
    expect(imageTokens({ width: 750, height: 100 })).toBe(100);
    // 3136×1568 scales to 1568×784: 1,229,312 / 750 → 1640.
    expect(imageTokens({ width: 3136, height: 1568 })).toBe(1640);
    expect(imageTokens(undefined)).toBe(1600);
  });

  it("estimates an inline image message from its pixels", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    expect(estimator.message(imageMessage(png(750, 100).toString("base64")))).toBe(4 + 100);
    expect(estimator.message(imageMessage("!!!"))).toBe(4 + 1600);
  });
});

describe("text estimates", () => {
  it("counts with the real tokenizer once loaded", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    expect(estimator.text("hello world")).toBe(2);
    expect(estimator.message(userMessage("hello world"))).toBe(6);
    expect(estimator.text("<|endoftext|>")).toBeGreaterThan(1);
  });

  it("counts tool calls and tool results", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    const call = { type: "toolCall" as const, id: "1", name: "read_file", arguments: { path: "a" }, rawArguments: '{"path":"a"}' };
    expect(estimator.message(assistantMessage("", [call]))).toBeGreaterThan(8);
    expect(estimator.message(toolMessage("1", "read_file", "hello world"))).toBe(6);
  });

  it("bounds the cost of long unbroken runs by slicing", () => {
    let calls = 0;
    const total = countSliced((t) => (calls++, t.length), "x".repeat(10_000));
    expect(total).toBe(10_000);
    expect(calls).toBe(10);
  });

  it("caches per message object", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    const messages = Array.from({ length: 100 }, (_, i) => userMessage(`message number ${i}`));
    const first = estimateMessages(estimator, messages);
    // Mutating a cached message is not supported; the cached count proves no re-tokenisation.
    (messages[0]!.content[0] as { text: string }).text = "changed ".repeat(50);
    expect(estimateMessages(estimator, messages)).toBe(first);
  });

  it("recognises a reloaded message by id when its content signature matches", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    await estimator.load();
    const original = userMessage("hello world");
    expect(estimator.message(original)).toBe(6);
    // Same id and same shape, different object (e.g. loaded from storage): served from the id cache.
    expect(estimator.message({ ...original, content: [{ type: "text", text: "zq xv wk pj" }] })).toBe(6);
    // Same id, different length: counted afresh.
    expect(estimator.message({ ...original, content: [{ type: "text", text: "hello world again" }] })).toBe(7);
  });
});
