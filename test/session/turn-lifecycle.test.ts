import { describe, expect, it } from "vitest";
import { assistantMessage, ProviderError, userMessage } from "../../src/core/index.js";
import {
  MODEL_ERROR_MARKER,
  TOOL_INTERRUPTED,
  historyProblems,
} from "../../src/session/index.js";
import type { PortableSessionStore } from "../../src/session/index.js";
import { call, callingAssistant, plainTurn, result, runResult, shape, describeEachStore, storePerTest } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";

const KEY = "cli:direct";
await describeEachStore("turn lifecycle", (kind) => {
  let stores: TempStores<PortableSessionStore>;
  let store: PortableSessionStore;
  storePerTest((fx) => ({ stores, store } = fx), kind);

  describe("beginTurn", () => {
    it("persists the user message and a pending turn before the model is called", async () => {
      const user = userMessage("hello");
      const turn = await store.beginTurn(KEY, user);
      // A second store instance (another process's view) sees it already.
      const other = stores.open();
      expect(shape(await other.loadHistory(KEY))).toEqual(["user:hello"]);
      expect((await other.loadHistory(KEY))[0]!.id).toBe(user.id);
      expect((await other.getTurn(turn.turnId))?.status).toBe("pending");
    });
  });

  describe("completeTurn", () => {
    it("commits the run's messages with stable ids and marks the turn completed", async () => {
      const user = userMessage("list files");
      const turn = await store.beginTurn(KEY, user);
      const a1 = callingAssistant("", call("c1", "ls", { path: "." }));
      const r1 = result("c1", "ls", "a.txt b.txt");
      const a2 = assistantMessage("There are two files.");
      await store.saveCheckpoint(turn.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [a1], assistant: a1, pendingToolCalls: [call("c1", "ls")] });
      await store.saveCheckpoint(turn.turnId, { phase: "tools_completed", iteration: 1, newMessages: [a1, r1] });
      await store.completeTurn(turn.turnId, runResult([a1, r1, a2], { toolsUsed: ["ls"], iterations: 2 }));

      const history = await store.loadHistory(KEY);
      expect(history.map((m) => m.id)).toEqual([user.id, a1.id, r1.id, a2.id]);
      expect(history[1]).toEqual(a1);
      expect(history[2]).toEqual(r1);
      const info = await store.getTurn(turn.turnId);
      expect(info).toMatchObject({ status: "completed", stopReason: "completed", usage: { promptTokens: 10, completionTokens: 5 } });
    });

    it("folds the turn's checkpoint row into its closing: the count stays in the turn's timings", async () => {
      const turn = await store.beginTurn(KEY, userMessage("list files"));
      const a1 = callingAssistant("", call("c1", "ls", { path: "." }));
      const r1 = result("c1", "ls", "a.txt");
      await store.saveCheckpoint(turn.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [a1], assistant: a1, pendingToolCalls: [call("c1", "ls")] });
      await store.saveCheckpoint(turn.turnId, { phase: "tools_completed", iteration: 1, newMessages: [a1, r1] });
      expect((await store.readRecords(KEY))!.checkpoints.map((c) => c.count)).toEqual([2]);
      await store.completeTurn(turn.turnId, runResult([a1, r1, assistantMessage("One file.")]));
      const records = (await store.readRecords(KEY))!;
      expect(records.checkpoints).toEqual([]);
      const closed = records.turns.find((t) => t.id === turn.turnId)!;
      expect(JSON.parse(closed.timings!)).toMatchObject({ checkpoints: 2 });
      // A turn that saved none records 0.
      const plain = await store.beginTurn(KEY, userMessage("again"));
      await store.completeTurn(plain.turnId, runResult([assistantMessage("Still one.")]));
      const plainRow = (await store.readRecords(KEY))!.turns.find((t) => t.id === plain.turnId)!;
      expect(JSON.parse(plainRow.timings!)).toMatchObject({ checkpoints: 0 });
    });

    it("marks the session and its thread active when the turn ends", async () => {
      await store.completeTurn((await store.beginTurn(KEY, userMessage("first"))).turnId, runResult([assistantMessage("one")]));
      const turn = await store.beginTurn(KEY, userMessage("second"));
      await new Promise((resolve) => setTimeout(resolve, 5));
      const beforeClose = Date.now();
      await store.completeTurn(turn.turnId, runResult([assistantMessage("two")]));
      const session = (await store.listSessions()).find((s) => s.key === KEY)!;
      expect(session.updatedAt).toBeGreaterThanOrEqual(beforeClose);
      const threads = await store.listThreads(KEY);
      expect(threads.find((t) => t.current)!.updatedAt).toBeGreaterThanOrEqual(beforeClose);
    });

    it("marks the session active with the closing's metadata patch, and when a turn fails or stops", async () => {
      const closes: [string, (turnId: string) => Promise<void>][] = [
        ["complete", (id) => store.completeTurn(id, runResult([assistantMessage("ok")]), { metadata: { lastModel: "m1" } })],
        ["fail", (id) => store.failTurn(id, new Error("boom"))],
        ["stop", (id) => store.stopTurn(id)],
        ["fail with metadata", (id) => store.failTurn(id, new Error("boom"), { metadata: { lastModel: "m2" } })],
      ];
      for (const [how, close] of closes) {
        const turn = await store.beginTurn(KEY, userMessage(how));
        await new Promise((resolve) => setTimeout(resolve, 5));
        const beforeClose = Date.now();
        await close(turn.turnId);
        const session = (await store.listSessions()).find((s) => s.key === KEY)!;
        expect(session.updatedAt, how).toBeGreaterThanOrEqual(beforeClose);
      }
      expect(await store.sessionMetadata(KEY)).toMatchObject({ lastModel: "m2" });
    });

    it("refuses to close a turn twice", async () => {
      const turn = await store.beginTurn(KEY, userMessage("hi"));
      await store.completeTurn(turn.turnId, runResult([assistantMessage("hey")]));
      await expect(store.failTurn(turn.turnId, new Error("x"))).rejects.toThrow(/already completed/);
    });
  });

  describe("resumeTurn (external tools answered by the caller)", () => {
    it("opens a turn with the caller's results in place of a user message; unanswered calls get an error result", async () => {
      const user = userMessage("weather and time?");
      const turn = await store.beginTurn(KEY, user);
      const asking = callingAssistant("", call("x1", "weather", { city: "Oslo" }), call("x2", "clock"));
      await store.completeTurn(turn.turnId, runResult([asking], { stopReason: "external_tool" }));
      expect(shape(await store.loadHistory(KEY))).toEqual(["user:weather and time?", "assistant:[x1,x2]"]);

      const { handle, messages } = await store.resumeTurn(KEY, [result("x1", "ignored-name", "sunny")]);
      expect(messages.map((m) => (m.role === "tool" ? `${m.toolCallId}:${m.toolName}` : m.role))).toEqual(["x1:weather", "x2:clock"]);
      expect(handle.userMessageId).toBe(messages.at(-1)!.id);
      expect((await store.getTurn(handle.turnId))?.status).toBe("pending");
      await store.completeTurn(handle.turnId, runResult([assistantMessage("Sunny in Oslo.")]));
      const history = await stores.open().loadHistory(KEY);
      expect(history.filter((m) => m.role === "user")).toHaveLength(1);
      expect(historyProblems(history)).toEqual([]);
      expect(history.at(-1)).toMatchObject({ role: "assistant" });
    });

    it("refuses a result that answers no open call, and stores nothing", async () => {
      await plainTurn(store, KEY, "hi", "hello");
      const before = await store.loadHistory(KEY);
      await expect(store.resumeTurn(KEY, [result("nope", "weather", "sunny")])).rejects.toThrow(/no open tool call/);
      expect(await store.loadHistory(KEY)).toEqual(before);
    });
  });

  describe("failTurn (provider error mid-turn)", () => {
    it("rolls the thread back: history = before + user + error marker", async () => {
      await plainTurn(store, KEY, "first", "first answer");
      const before = await store.loadHistory(KEY);

      const user = userMessage("second");
      const turn = await store.beginTurn(KEY, user);
      const a1 = callingAssistant("checking", call("c1", "read_file", { path: "x" }));
      await store.saveCheckpoint(turn.turnId, { phase: "tools_completed", iteration: 1, newMessages: [a1, result("c1", "read_file", "data")] });
      await store.failTurn(turn.turnId, new ProviderError("upstream 500", { kind: "server", status: 500, retryable: true }));

      const after = await store.loadHistory(KEY);
      expect(after.slice(0, before.length)).toEqual(before);
      expect(shape(after.slice(before.length))).toEqual(["user:second", `assistant:${MODEL_ERROR_MARKER}`]);
      expect(after[before.length]!.id).toBe(user.id);
      expect(historyProblems(after)).toEqual([]);
      expect(await store.getTurn(turn.turnId)).toMatchObject({ status: "failed", stopReason: "error", error: "upstream 500" });

      // The next turn continues from the legal history.
      await plainTurn(store, KEY, "third", "ok");
      expect(shape(await store.loadHistory(KEY)).slice(-2)).toEqual(["user:third", "assistant:ok"]);
    });

    it("treats a completeTurn with stopReason error as a failure", async () => {
      const turn = await store.beginTurn(KEY, userMessage("q"));
      await store.completeTurn(turn.turnId, runResult([assistantMessage("partial")], { stopReason: "error", error: new Error("boom") }));
      expect(shape(await store.loadHistory(KEY))).toEqual(["user:q", `assistant:${MODEL_ERROR_MARKER}`]);
    });
  });

  describe("failTurn keeps what the user said mid-turn", () => {
    it("user messages injected during the failed turn survive the rollback, saved or not", async () => {
      const user = userMessage("first question");
      const turn = await store.beginTurn(KEY, user);
      const a1 = callingAssistant("", call("c1", "read_file", { path: "x" }));
      const r1 = result("c1", "read_file", "data");
      const injectedSaved = userMessage("also check y");
      const injectedLate = userMessage("and z please");
      // The first injection reached a checkpoint; the second only the run's result.
      await store.saveCheckpoint(turn.turnId, { phase: "tools_completed", iteration: 1, newMessages: [a1, r1, injectedSaved] });
      await store.completeTurn(
        turn.turnId,
        runResult([a1, r1, injectedSaved, injectedLate], { stopReason: "error", error: new ProviderError("down", { kind: "server" }) }),
      );
      const history = await store.loadHistory(KEY);
      expect(shape(history)).toEqual(["user:first question", "user:also check y", "user:and z please", `assistant:${MODEL_ERROR_MARKER}`]);
      expect(historyProblems(history)).toEqual([]);
    });
  });

  describe("stopTurn", () => {
    it("keeps the completed tool and answers the pending one with an interruption error", async () => {
      const turn = await store.beginTurn(KEY, userMessage("do two things"));
      const a1 = callingAssistant("", call("done", "fetch"), call("slow", "exec"));
      const r1 = result("done", "fetch", "page content");
      await store.saveCheckpoint(turn.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [a1], assistant: a1 });
      await store.stopTurn(turn.turnId, {
        phase: "awaiting_tools",
        iteration: 1,
        newMessages: [a1],
        assistant: a1,
        completedResults: [r1],
        pendingToolCalls: [call("slow", "exec")],
      });

      const history = await store.loadHistory(KEY);
      expect(shape(history)).toEqual([
        "user:do two things",
        "assistant:[done,slow]",
        "tool(done):page content",
        `tool(slow):${TOOL_INTERRUPTED}`,
      ]);
      const interrupted = history[3]!;
      expect(interrupted.role === "tool" && interrupted.isError).toBe(true);
      expect(historyProblems(history)).toEqual([]);
      expect(await store.getTurn(turn.turnId)).toMatchObject({ status: "stopped", stopReason: "aborted" });
    });

    it("uses the last saved checkpoint when stopped without one", async () => {
      const turn = await store.beginTurn(KEY, userMessage("go"));
      const a1 = callingAssistant("", call("c1", "exec"));
      await store.saveCheckpoint(turn.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [a1], assistant: a1 });
      await store.stopTurn(turn.turnId);
      expect(shape(await store.loadHistory(KEY))).toEqual(["user:go", "assistant:[c1]", `tool(c1):${TOOL_INTERRUPTED}`]);
    });
  });

  describe("saving drops invalid tool results", () => {
    it("drops orphan, duplicate and undeclared results on completeTurn", async () => {
      const turn = await store.beginTurn(KEY, userMessage("x"));
      const a1 = callingAssistant("", call("c1", "ls"));
      const messages = [
        result("ghost", "ls", "no such call"), // undeclared: before any assistant
        a1,
        result("c1", "ls", "first"),
        result("c1", "ls", "duplicate"), // duplicate
        result("c9", "ls", "never declared"), // undeclared
        assistantMessage("done"),
        result("c1", "ls", "late orphan"), // orphan: its block is closed
      ];
      await store.completeTurn(turn.turnId, runResult(messages));
      const history = await store.loadHistory(KEY);
      expect(shape(history)).toEqual(["user:x", "assistant:[c1]", "tool(c1):first", "assistant:done"]);
      expect(historyProblems(history)).toEqual([]);
    });

    it("drops results of appendMessages that answer nothing open at the tail", async () => {
      const turn = await store.beginTurn(KEY, userMessage("x"));
      await store.completeTurn(turn.turnId, runResult([callingAssistant("", call("ext", "browser"))], { stopReason: "external_tool" }));
      await store.appendMessages(KEY, [result("ext", "browser", "clicked"), result("ext", "browser", "again"), result("zzz", "x", "?")]);
      expect(shape(await store.loadHistory(KEY))).toEqual(["user:x", "assistant:[ext]", "tool(ext):clicked"]);
    });
  });

  describe("closing a turn with a metadata patch", () => {
    it("writes the session metadata in the same transaction as the closing", async () => {
      const turn = await store.beginTurn(KEY, userMessage("hi"));
      await store.completeTurn(turn.turnId, runResult([assistantMessage("hello")]), { metadata: { usage: { promptTokens: 3, completionTokens: 1 }, lastModel: "custom/m" } });
      expect((await store.getTurn(turn.turnId))?.status).toBe("completed");
      // Another process's view: both writes are there.
      expect((await stores.open().getSession(KEY))?.metadata).toMatchObject({ usage: { promptTokens: 3, completionTokens: 1 }, lastModel: "custom/m" });
      // Failing and stopping patch too (tokens spent on a failed turn still count); undefined deletes a key.
      const failed = await store.beginTurn(KEY, userMessage("again"));
      await store.failTurn(failed.turnId, new Error("provider down"), { metadata: { lastModel: undefined } });
      expect((await store.getSession(KEY))?.metadata.lastModel).toBeUndefined();
      const stopped = await store.beginTurn(KEY, userMessage("once more"));
      await store.stopTurn(stopped.turnId, undefined, { metadata: { stopped: true } });
      expect((await store.getSession(KEY))?.metadata.stopped).toBe(true);
    });
  });
});
