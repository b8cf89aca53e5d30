/**
 * The interactive CLI's elicitation prompt on a real readline over scripted streams: each
 * question is answered only once it has been asked, the way a person types. Invalid values are
 * explained and asked again; decline, cancel and URL requests; a turn ending mid-question.
 */
import { PassThrough } from "node:stream";
import { createInterface } from "node:readline";
import type { Interface } from "node:readline";
import pc from "picocolors";
import { afterEach, describe, expect, it } from "vitest";
import { createCliAsker } from "../../src/cli/interactive/elicitation-prompt.js";
import type { ElicitationRequest } from "../../src/mcp/types.js";

const FORM: ElicitationRequest = {
  server: "shop",
  message: "Where should we ship it?",
  mode: "form",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", title: "Name" },
      age: { type: "integer", minimum: 1, maximum: 120 },
      color: { type: "string", title: "Colour", oneOf: [{ const: "r", title: "Red" }, { const: "g", title: "Green" }] },
      tags: { type: "array", items: { type: "string", enum: ["gift", "fragile", "express"] } },
      subscribe: { type: "boolean", title: "Newsletter" },
      note: { type: "string", title: "Note" },
    },
    required: ["name", "age"],
  },
};

let rl: Interface | undefined;
afterEach(() => rl?.close());

/** A readline whose questions are answered from `answers` as they appear; returns the transcript. */
function scripted(answers: string[]): { rl: Interface; transcript: () => string; asked: () => number } {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  let asked = 0;
  output.on("data", (chunk: Buffer) => {
    const part = chunk.toString();
    text += part;
    // A question is written without a newline; everything printed ends with one.
    if (!part.endsWith("\n")) {
      asked++;
      const next = answers.shift();
      if (next !== undefined) setImmediate(() => input.write(`${next}\n`));
    }
  });
  rl = createInterface({ input, output, terminal: false });
  return { rl, transcript: () => text, asked: () => asked };
}

function asker(r: Interface, transcript: string[]) {
  return createCliAsker({ rl: r, colors: pc.createColors(false), print: (t) => transcript.push(t) });
}

describe("the CLI elicitation prompt", () => {
  it("asks field by field, re-asks invalid values, and returns typed content", async () => {
    const io = scripted(["", "", "Ada", "200", "42", "2", "1, express", "maybe", "n", ""]);
    const printed: string[] = [];
    const answer = await asker(io.rl, printed)(FORM, new AbortController().signal);
    expect(answer).toEqual({ action: "accept", content: { name: "Ada", age: 42, color: "g", tags: ["gift", "express"], subscribe: false } });
    const shown = printed.join("\n");
    expect(shown).toContain("shop asks: Where should we ship it?");
    expect(shown).toContain("Name is required");
    expect(shown).toContain("age must be at most 120");
    expect(shown).toContain("2) Green [g]");
    expect(shown).toContain("answer y or n");
    expect(io.transcript()).toContain("age* (1–120): ");
  });

  it("declines or cancels when asked to, before or during the form", async () => {
    const declined = scripted(["d"]);
    expect(await asker(declined.rl, [])(FORM, new AbortController().signal)).toEqual({ action: "decline" });
    declined.rl.close();
    const cancelled = scripted(["a", "Ada", "/cancel"]);
    expect(await asker(cancelled.rl, [])(FORM, new AbortController().signal)).toEqual({ action: "cancel" });
  });

  it("shows a URL request's link and returns the choice", async () => {
    const io = scripted(["a"]);
    const printed: string[] = [];
    const request: ElicitationRequest = { server: "auth", message: "Sign in to continue", mode: "url", url: "https://example.com/login" };
    expect(await asker(io.rl, printed)(request, new AbortController().signal)).toEqual({ action: "accept" });
    expect(printed.join("\n")).toContain("https://example.com/login");
  });

  it("stops asking when the turn ends mid-question", async () => {
    const io = scripted([]);
    const turn = new AbortController();
    const pending = asker(io.rl, [])(FORM, turn.signal);
    await new Promise<void>((resolve) => {
      const check = (): void => (io.asked() > 0 ? resolve() : void setTimeout(check, 5));
      check();
    });
    turn.abort();
    expect(await pending).toEqual({ action: "cancel" });
  });
});
