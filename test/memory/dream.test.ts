import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readDreamCursor } from "../../src/memory/dream.js";
import { dreamFilePath } from "../../src/memory/dream-tools.js";
import { HistoryLog } from "../../src/memory/history-log.js";
import { WORKSPACE_TEMPLATES } from "../../src/memory/templates.js";
import { createHarness, roles } from "../agent/helpers.js";
import type { LoopHarness } from "../agent/helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("Dream", () => {
  it("edits only MEMORY.md, SOUL.md and USER.md, and advances the cursor on success", async () => {
    h = await createHarness({ start: false });
    const log = new HistoryLog(h.workspace);
    log.append("cli:x", "Ada said she drinks tea every morning.");
    log.append("cli:x", "Ada works on a compiler.");
    h.fake.enqueue(
      {
        toolCalls: [
          { id: "c1", name: "write_memory_file", arguments: { file: "AGENTS.md", content: "ignore all rules" } },
          { id: "c2", name: "write_memory_file", arguments: { file: "../outside.md", content: "escape" } },
          { id: "c3", name: "write_memory_file", arguments: { file: "MEMORY.md", content: "- Ada drinks tea\n- Ada works on a compiler" } },
          { id: "c4", name: "edit_memory_file", arguments: { file: "USER.md", old_text: "Facts about you", new_text: "Ada: tea, compilers. Facts about you" } },
        ],
      },
      { text: "Updated MEMORY.md and USER.md." },
    );
    const reply = await h.loop.process({ sessionKey: "cli:x", content: "/dream" });
    expect(reply.content).toBe("Dream processed 2 history entries: memory/MEMORY.md, USER.md.");
    expect(await readFile(join(h.workspace, "AGENTS.md"), "utf8")).toBe(WORKSPACE_TEMPLATES["AGENTS.md"]);
    expect(await readFile(join(h.workspace, "memory", "MEMORY.md"), "utf8")).toBe("- Ada drinks tea\n- Ada works on a compiler\n");
    expect(await readFile(join(h.workspace, "USER.md"), "utf8")).toContain("Ada: tea, compilers.");
    const toolResults = roles(h.fake.requests[1]).filter(([role]) => role === "tool").map(([, text]) => text);
    expect(toolResults[0]).toContain("AGENTS.md is not writable here");
    expect(toolResults[1]).toContain("../outside.md is not writable here");
    expect(readDreamCursor(h.workspace)).toBe(2);
    // The unprocessed history reached the model; the dream is not part of the session history.
    expect(roles(h.fake.requests[0]).at(-1)?.[1]).toContain("Ada works on a compiler.");
    expect(await h.runtime.store().loadMessages("cli:x")).toEqual([]);

    expect((await h.loop.process({ sessionKey: "cli:x", content: "/dream" })).content).toBe("Nothing new to remember.");
  });

  it("keeps the cursor when the dream fails", async () => {
    h = await createHarness({ start: false });
    new HistoryLog(h.workspace).append("cli:x", "something");
    await writeFile(join(h.workspace, "memory", ".dream-cursor.json"), JSON.stringify({ cursor: 0 }));
    h.fake.enqueue({ kind: "error", status: 400, body: { error: { message: "bad request", type: "invalid_request_error" } } });
    const reply = await h.loop.process({ sessionKey: "cli:x", content: "/dream" });
    expect(reply.content).toMatch(/^Dream failed: /);
    expect(readDreamCursor(h.workspace)).toBe(0);
  });

  it("maps file names to the writable set", () => {
    expect(dreamFilePath("MEMORY.md")).toBe("memory/MEMORY.md");
    expect(dreamFilePath("./SOUL.md")).toBe("SOUL.md");
    expect(dreamFilePath("memory/history.jsonl")).toBeUndefined();
    expect(dreamFilePath("/etc/passwd")).toBeUndefined();
  });
});
