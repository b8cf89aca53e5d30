/**
 * The consolidation history log: every turn's prompt reads its recent entries, so the parsed
 * tail is kept while the file is unchanged — and re-read as soon as anyone (this process, another
 * nanobot, an editor) changes it.
 */
import { appendFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HistoryLog } from "../../src/memory/history-log.js";

let workspace: string;
beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), "nanobot-history-"));
});
afterEach(() => rmSync(workspace, { recursive: true, force: true }));

describe("HistoryLog", () => {
  it("numbers entries and returns a session's most recent ones", () => {
    const log = new HistoryLog(workspace, () => Date.UTC(2026, 0, 1));
    expect(log.recent("cli:a", 5)).toEqual([]);
    log.append("cli:a", "one");
    log.append("cli:b", "other session");
    log.append("cli:a", "two");
    log.append("cli:a", "three");
    expect(log.recent("cli:a", 2).map((e) => [e.cursor, e.content])).toEqual([
      [3, "two"],
      [4, "three"],
    ]);
    expect(log.recent("cli:b", 5)[0]).toEqual({ cursor: 2, timestamp: "2026-01-01T00:00:00.000Z", content: "other session", sessionKey: "cli:b" });
  });

  it("sees what another writer appended, and a file that was replaced or removed", () => {
    const log = new HistoryLog(workspace);
    log.append("cli:a", "mine");
    expect(log.recent("cli:a", 5).map((e) => e.content)).toEqual(["mine"]);
    // Another process appends a line: the next read sees it.
    appendFileSync(log.path, `${JSON.stringify({ cursor: 2, timestamp: "t", content: "theirs", sessionKey: "cli:a" })}\n`);
    expect(log.recent("cli:a", 5).map((e) => e.content)).toEqual(["mine", "theirs"]);
    // Rewritten (e.g. by hand) to something else.
    writeFileSync(log.path, `${JSON.stringify({ cursor: 7, timestamp: "t", content: "rewritten", sessionKey: "cli:a" })}\n`);
    expect(log.recent("cli:a", 5).map((e) => e.content)).toEqual(["rewritten"]);
    rmSync(log.path);
    expect(log.recent("cli:a", 5)).toEqual([]);
  });

  it("skips a damaged line and keeps the rest", () => {
    const log = new HistoryLog(workspace);
    log.append("cli:a", "before");
    appendFileSync(log.path, '{"cursor": 2, "content": "cut off mid-wri\n');
    log.append("cli:a", "after");
    expect(log.recent("cli:a", 5).map((e) => e.content)).toEqual(["before", "after"]);
  });

  it("after its own appends answers as a fresh reader of the file would, also past the tail it keeps", () => {
    const log = new HistoryLog(workspace);
    // ~5 KB entries: the 64 KB tail holds a dozen of them, so the kept tail must drop old ones.
    for (let i = 0; i < 40; i++) {
      log.append(i % 3 === 0 ? "cli:b" : "cli:a", `entry ${i} ${"x".repeat(5_000)}`);
      const fresh = new HistoryLog(workspace);
      expect(log.recent("cli:a", 100).map((e) => e.cursor)).toEqual(fresh.recent("cli:a", 100).map((e) => e.cursor));
      expect(log.recent("cli:b", 100).map((e) => e.cursor)).toEqual(fresh.recent("cli:b", 100).map((e) => e.cursor));
    }
    expect(log.recent("cli:a", 1)[0]?.content.startsWith("entry 38 ")).toBe(true);
  });

  it("sees another writer's line between two of its own appends, and numbers past it", () => {
    const log = new HistoryLog(workspace);
    log.append("cli:a", "first");
    expect(log.recent("cli:a", 5).map((e) => e.content)).toEqual(["first"]);
    appendFileSync(log.path, `${JSON.stringify({ cursor: 2, timestamp: "t", content: "theirs", sessionKey: "cli:a" })}\n`);
    log.append("cli:a", "second");
    expect(log.recent("cli:a", 5).map((e) => [e.cursor, e.content])).toEqual([
      [1, "first"],
      [2, "theirs"],
      [3, "second"],
    ]);
  });

  it("creates a missing memory folder on the first append", () => {
    const log = new HistoryLog(join(workspace, "gone"));
    expect(existsSync(log.path)).toBe(false);
    log.append("cli:a", "kept");
    expect(new HistoryLog(join(workspace, "gone")).recent("cli:a", 5).map((e) => e.content)).toEqual(["kept"]);
  });
});
