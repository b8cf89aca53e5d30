import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, toolMessage, userMessage } from "../../src/core/index.js";
import type { AssistantMessage } from "../../src/core/index.js";
import { exportSessionLines, importSessionJsonl, parseSessionJsonl } from "../../src/session/index.js";
import { call, describeEachStore, plainTurn, runResult, shape, tempStores } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";
import type { PortableSessionStore } from "../../src/session/index.js";

const PY_FILE = fileURLToPath(new URL("./fixtures/python-session.jsonl", import.meta.url));
const PY_KEY = "telegram:8812345";

await describeEachStore("JSONL import and export", (kind) => {
  let stores: TempStores<PortableSessionStore>;
  beforeEach(async () => {
    stores = await tempStores(kind);
  });
  afterEach(async () => {
    await stores.cleanup();
  });
  describe("import of a Python nanobot session", () => {
    it("reads every message, the consolidation point and the metadata", async () => {
      const store = stores.open();
      const text = await readFile(PY_FILE, "utf8");
      const imported = await importSessionJsonl(store, text);
      expect(imported).toMatchObject({ key: PY_KEY, messageCount: 8, archivedPrevious: false });

      const all = await store.loadMessages(PY_KEY);
      expect(shape(all)).toEqual([
        "user:Find me a train from Berlin to Prague on Friday",
        "assistant:Sure — which time of day do you prefer?",
        "user:Morning. Also here is my rail card.",
        "user:[image]",
        "assistant:[call_9f2a]",
        "tool(call_9f2a):1. EC 171 dep 06:46 arr 11:12\n2. EC 173 dep 08:46 arr 13:12",
        "assistant:Two good options: EC 171 (06:46 → 11:12) and EC 173 (08:46 → 13:12).",
        "user:/status",
      ]);
      expect(all[3]!.content[1]).toEqual({ type: "image", mimeType: "image/jpeg", data: "/9j/4AAQSkZJRgABAQ==" });
      const searching = all[4] as AssistantMessage;
      expect(searching.content).toEqual([
        { type: "reasoning", text: "The user wants morning trains; search first." },
        {
          type: "toolCall",
          id: "call_9f2a",
          name: "web_search",
          arguments: { query: "Berlin Prague train Friday morning", count: 5 },
          rawArguments: '{"query": "Berlin Prague train Friday morning", "count": 5}',
        },
      ]);
      // Naive Python timestamps are local time.
      expect(all[0]!.createdAt).toBe(new Date(2026, 2, 2, 9, 14, 3, 512).getTime());
      // last_consolidated = 2: the model history starts at the third message.
      expect(shape(await store.loadHistory(PY_KEY))[0]).toBe("user:Morning. Also here is my rail card.");
      expect((await store.getSession(PY_KEY))?.metadata).toEqual({ title: "Trip planning", lang: "en" });
    });

    it("exports the imported session back to the same Python lines", async () => {
      const store = stores.open();
      const text = await readFile(PY_FILE, "utf8");
      await importSessionJsonl(store, text);
      const [meta, ...lines] = await exportSessionLines(store, PY_KEY);
      const original = parseSessionJsonl(text);
      expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(original.messages);
      const exportedMeta = JSON.parse(meta!) as Record<string, unknown>;
      expect(exportedMeta).toMatchObject({ _type: "metadata", key: PY_KEY, metadata: original.metadata!.metadata, last_consolidated: 2 });
      expect(Date.parse(exportedMeta["created_at"] as string)).toBe(Date.parse(original.metadata!.created_at));
    });

    it("importing into an existing session archives its thread instead of overwriting", async () => {
      const store = stores.open();
      await plainTurn(store, PY_KEY, "existing", "history");
      const result = await importSessionJsonl(store, await readFile(PY_FILE, "utf8"));
      expect(result.archivedPrevious).toBe(true);
      const threads = await store.listThreads(PY_KEY);
      expect(threads.map((t) => [t.status, t.messageCount, t.current])).toEqual([
        ["archived", 2, false],
        ["active", 8, true],
      ]);
    });

    it("names the bad line in a broken file", async () => {
      const store = stores.open();
      await expect(importSessionJsonl(store, '{"_type":"metadata","key":"a:b"}\n{"role":"user"\n')).rejects.toThrow(/line 2: not JSON/);
      await expect(importSessionJsonl(store, '{"role":"user","content":"x"}\n')).rejects.toThrow(/no metadata line/);
      await expect(importSessionJsonl(store, '{"role":"wizard","content":"x"}\n', { key: "a:b" })).rejects.toThrow(/line 1: unknown role/);
    });
  });

  describe("round trip", () => {
    it("export → import → export gives the same lines for a rich session", async () => {
      const source = stores.open("a.db");
      const key = "api:round-trip";
      await source.updateMetadata(key, { title: "Everything" });
      const t1 = await source.beginTurn(key, userMessage([
        { type: "text", text: "Look at this" },
        { type: "image", mimeType: "image/png", url: "https://example.org/cat" },
        { type: "file", mimeType: "application/pdf", name: "doc.pdf", data: "JVBERi0=" },
      ]));
      const thinking: AssistantMessage = {
        ...assistantMessage("", [call("c1", "read_file", { path: "doc.pdf" }), call("c2", "exec", { command: "ls" })]),
        provider: "anthropic",
        model: "claude-sonnet",
        usage: { promptTokens: 500, completionTokens: 40, cachedTokens: 300 },
        finishReason: "tool_calls",
      };
      thinking.content.unshift({ type: "reasoning", text: "Read it first.", signature: "sig-abc" });
      const failed = toolMessage("c2", "exec", "permission denied", true);
      await source.completeTurn(t1.turnId, runResult([thinking, toolMessage("c1", "read_file", "PDF text"), failed, assistantMessage("It is a cat and a PDF.")]));
      const command = userMessage("/new");
      command.meta = { command: true };
      await source.appendMessages(key, [command]);
      const all = await source.loadMessages(key);
      await source.markConsolidated(key, { fromMessageId: all[4]!.id, summary: assistantMessage("Summary so far.") });

      const first = await exportSessionLines(source, key);
      const target = stores.open("b.db");
      await importSessionJsonl(target, first.join("\n"));
      const second = await exportSessionLines(target, key);
      expect(second).toEqual(first);
      // The re-imported history is the same model history.
      const strip = (ms: Awaited<ReturnType<typeof source.loadHistory>>) => ms.map(({ id: _id, ...rest }) => rest);
      expect(strip(await target.loadHistory(key))).toEqual(strip(await source.loadHistory(key)));
      expect(JSON.parse(first[2]!)).toMatchObject({ role: "assistant", content: null, reasoning_content: "Read it first." });
    });
  });
});
