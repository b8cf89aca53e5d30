import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitMessage, splitRendered } from "../../src/channels/delivery/split-message.js";
import { escapeHtml, markdownToTelegramHtml } from "../../src/channels/telegram/markdown-html.js";

describe("splitMessage", () => {
  it("returns short text as one chunk", () => {
    expect(splitMessage("hello\n\nworld", 100)).toEqual(["hello\n\nworld"]);
  });

  it("cuts between paragraphs, not inside them", () => {
    const p = (c: string) => c.repeat(40);
    expect(splitMessage(`${p("a")}\n\n${p("b")}\n\n${p("c")}`, 90)).toEqual([`${p("a")}\n\n${p("b")}`, p("c")]);
  });

  it("keeps a code block that fits whole in one chunk", () => {
    const code = "```py\nprint(1)\nprint(2)\n```";
    const chunks = splitMessage(`${"x".repeat(50)}\n\n${code}\n\nafter`, 60);
    expect(chunks).toHaveLength(2);
    expect(chunks[1]).toBe(`${code}\n\nafter`);
  });

  it("closes and reopens the fence when a code block is longer than the limit", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line_${String(i).padStart(2, "0")}`);
    const chunks = splitMessage(`intro\n\n\`\`\`ts\n${lines.join("\n")}\n\`\`\``, 80);
    const codeChunks = chunks.filter((c) => c.includes("line_"));
    expect(codeChunks.length).toBeGreaterThan(1);
    for (const c of codeChunks) {
      expect(c.length).toBeLessThanOrEqual(80);
      expect(c.startsWith("```ts\n")).toBe(true);
      expect(c.endsWith("\n```")).toBe(true);
    }
    expect(codeChunks.flatMap((c) => c.split("\n").slice(1, -1))).toEqual(lines);
  });

  it("cuts an over-long line at a space, or hard when there is none", () => {
    expect(splitMessage(`${"word ".repeat(10).trim()}`, 20)).toEqual(["word word word word", "word word word word", "word word"]);
    expect(splitMessage("z".repeat(45), 20)).toEqual(["z".repeat(20), "z".repeat(20), "z".repeat(5)]);
  });

  it("never cuts a long line so that its rest starts like a code fence", () => {
    // Found by the property below (seed 1978516699): the rest "```js" became a fence line.
    const text = `\n\`\`\`\n${" ".repeat(29)}! \`\`\`js\n`;
    const chunks = splitMessage(text, 40);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(40);
    expect(chunks.join("\n").split("\n").filter((l) => /^\s*```js/.test(l))).toEqual([]);
    expect(chunks.join("").replace(/\s+/g, "")).toContain("!```js");
  });

  it("never exceeds the limit and never loses non-space characters (property)", () => {
    const piece = fc.oneof(
      fc.string({ minLength: 0, maxLength: 120 }),
      fc.constantFrom("\n\n", "\n", "```\n", "```js\n", "\n```\n", "    ", "word "),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.integer({ min: 40, max: 300 }), (parts, limit) => {
        const text = parts.join("");
        const chunks = splitMessage(text, limit);
        for (const c of chunks) expect(c.length).toBeLessThanOrEqual(limit);
        // Only fence lines are added by the splitter; backticks inside a line are content.
        const strip = (s: string) => s.replace(/^[ \t]*```\w*[ \t]*$/gm, "").replace(/\s+/g, "");
        expect(strip(chunks.join("\n"))).toBe(strip(text));
      }),
      { numRuns: 300 },
    );
  });
});

describe("splitRendered", () => {
  it("re-splits chunks whose rendered form outgrows the limit", () => {
    const text = "<&>".repeat(1500); // escaping makes each 3 chars into 12
    const chunks = splitRendered(text, 4096, escapeHtml);
    for (const c of chunks) expect(c.rendered.length).toBeLessThanOrEqual(4096);
    expect(chunks.map((c) => c.source).join("")).toBe(text);
  });
});

describe("markdownToTelegramHtml", () => {
  it.each([
    ["**bold** and __also__", "<b>bold</b> and <b>also</b>"],
    ["*italic* and _this_", "<i>italic</i> and <i>this</i>"],
    ["~~gone~~", "<s>gone</s>"],
    ["use `a < b && c`", "use <code>a &lt; b &amp;&amp; c</code>"],
    ["[docs](https://example.com/?a=1&b=2)", '<a href="https://example.com/?a=1&amp;b=2">docs</a>'],
    ["[bad](javascript:alert(1))", "[bad](javascript:alert(1))"],
    ["# Title", "<b>Title</b>"],
    ["- one\n- two", "• one\n• two"],
    ["> quoted\n> more", "<blockquote>quoted\nmore</blockquote>"],
    ["snake_case_name stays", "snake_case_name stays"],
    ["2 * 3 * 4", "2 * 3 * 4"],
    ["<script>alert('x')</script> & more", "&lt;script&gt;alert('x')&lt;/script&gt; &amp; more"],
  ])("%j → %j", (input, expected) => {
    expect(markdownToTelegramHtml(input)).toBe(expected);
  });

  it("renders fenced code as pre/code with the language, escaped and unformatted", () => {
    expect(markdownToTelegramHtml("```ts\nconst x = a<b && **c**;\n```")).toBe(
      '<pre><code class="language-ts">const x = a&lt;b &amp;&amp; **c**;</code></pre>',
    );
    expect(markdownToTelegramHtml("```\nplain\n```")).toBe("<pre>plain</pre>");
  });
});
