import { describe, expect, it } from "vitest";
import { SessionStoreError } from "../../src/session/index.js";
import type { PortableSessionStore } from "../../src/session/index.js";
import { plainTurn, shape, describeEachStore, storePerTest } from "./helpers/temp-store.js";

const KEY = "cli:direct";
await describeEachStore("threads and sessions", (kind) => {
  let store: PortableSessionStore;
  storePerTest((fx) => ({ store } = fx), kind);

  describe("newThread", () => {
    it("archives the current thread (still readable) and starts an empty current one", async () => {
      await plainTurn(store, KEY, "old question", "old answer");
      const [first] = await store.listThreads(KEY);
      const fresh = await store.newThread(KEY);

      expect(await store.loadHistory(KEY)).toEqual([]);
      expect(shape(await store.loadMessages(KEY, { threadId: first!.id }))).toEqual(["user:old question", "assistant:old answer"]);
      const list = await store.listThreads(KEY);
      expect(list.map((t) => ({ id: t.id, status: t.status, current: t.current, count: t.messageCount }))).toEqual([
        { id: first!.id, status: "archived", current: false, count: 2 },
        { id: fresh.id, status: "active", current: true, count: 0 },
      ]);
      await plainTurn(store, KEY, "new question", "new answer");
      expect(shape(await store.loadHistory(KEY))).toEqual(["user:new question", "assistant:new answer"]);
      expect((await store.getSession(KEY))?.currentThreadId).toBe(fresh.id);
    });
  });

  describe("named threads", () => {
    it("are opened side by side, each with its own history", async () => {
      await plainTurn(store, KEY, "main talk", "main reply");
      const main = (await store.listThreads(KEY))[0]!;
      const research = await store.openThread(KEY, "research");
      await plainTurn(store, KEY, "find papers", "found 3");
      expect(shape(await store.loadHistory(KEY))).toEqual(["user:find papers", "assistant:found 3"]);

      await store.switchThread(KEY, main.id);
      expect(shape(await store.loadHistory(KEY))).toEqual(["user:main talk", "assistant:main reply"]);
      const again = await store.openThread(KEY, "research");
      expect(again.id).toBe(research.id);
      expect(shape(await store.loadHistory(KEY))).toEqual(["user:find papers", "assistant:found 3"]);
      expect((await store.listThreads(KEY)).map((t) => [t.name, t.status, t.current])).toEqual([
        [null, "active", false],
        ["research", "active", true],
      ]);
    });

    it("rename keeps names unique per session", async () => {
      const a = await store.openThread(KEY, "alpha");
      await store.openThread(KEY, "beta");
      await expect(store.renameThread(a.id, "beta")).rejects.toThrow(SessionStoreError);
      const renamed = await store.renameThread(a.id, "gamma");
      expect(renamed.name).toBe("gamma");
      expect((await store.openThread(KEY, "gamma")).id).toBe(a.id);
      await expect(store.openThread(KEY, "  ")).rejects.toThrow(/invalid thread name/);
    });
  });

  describe("deleteThread", () => {
    it("removes the thread with its messages and turns; deleting the current one starts a fresh one", async () => {
      await plainTurn(store, KEY, "keep", "kept");
      const kept = (await store.listThreads(KEY))[0]!;
      const doomed = await store.openThread(KEY, "scratch");
      await plainTurn(store, KEY, "scratch work", "done");

      expect(await store.deleteThread(doomed.id)).toBe(true);
      expect(await store.deleteThread(doomed.id)).toBe(false);
      const list = await store.listThreads(KEY);
      expect(list).toHaveLength(2);
      expect(list.find((t) => t.id === kept.id)?.messageCount).toBe(2);
      const current = list.find((t) => t.current)!;
      expect(current.id).not.toBe(doomed.id);
      expect(current.messageCount).toBe(0);
      await expect(store.loadMessages(KEY, { threadId: doomed.id })).rejects.toThrow(/no thread/);
    });
  });

  describe("sessions", () => {
    it("lists, updates metadata and deletes sessions", async () => {
      await plainTurn(store, "telegram:1", "a", "b");
      await plainTurn(store, "api:xyz", "c", "d");
      await store.updateMetadata("api:xyz", { title: "Trip", drop: 1 });
      await store.updateMetadata("api:xyz", { drop: undefined });
      const list = await store.listSessions();
      expect(list.map((s) => s.key).sort()).toEqual(["api:xyz", "telegram:1"]);
      expect((await store.getSession("api:xyz"))?.metadata).toEqual({ title: "Trip" });
      expect(await store.sessionMetadata("api:xyz")).toEqual({ title: "Trip" });
      expect(await store.deleteSession("telegram:1")).toBe(true);
      expect(await store.getSession("telegram:1")).toBeNull();
      expect(await store.sessionMetadata("telegram:1")).toBeNull();
      expect(await store.loadHistory("telegram:1")).toEqual([]);
    });
  });
});
