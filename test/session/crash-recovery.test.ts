import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/index.js";
import { TURN_INTERRUPTED, historyProblems } from "../../src/session/index.js";
import { describeEachStore, shape, tempStores } from "./helpers/temp-store.js";
import type { TempStores } from "./helpers/temp-store.js";
import type { PortableSessionStore } from "../../src/session/index.js";
import { spawnHelper, waitForExit, waitForLine } from "./helpers/spawn.js";

await describeEachStore("crash recovery", (kind) => {
  let stores: TempStores<PortableSessionStore>;
  beforeEach(async () => {
    stores = await tempStores(kind);
  });
  afterEach(async () => {
    await stores.cleanup();
  });
  describe("crash recovery", () => {
    it("closes a turn left pending by a SIGKILLed process before the next turn", async () => {
      const child = spawnHelper("crash-turn.ts", [JSON.stringify(stores.spec()), "telegram:42"]);
      const exited = waitForExit(child);
      const ready = await waitForLine(child, "READY ");
      const ids = JSON.parse(ready.slice("READY ".length)) as { turnId: string; userId: string; assistantId: string };
      child.kill("SIGKILL");
      expect((await exited).signal).toBe("SIGKILL");

      const store = stores.open();
      expect((await store.getTurn(ids.turnId))?.status).toBe("pending");
      const next = userMessage("are you there?");
      const handle = await store.beginTurn("telegram:42", next);
      expect(handle.recoveredTurns).toBe(1);

      const history = await store.loadHistory("telegram:42");
      expect(shape(history)).toEqual([
        "user:please run the long job",
        "assistant:Starting the job.[call_long]",
        `tool(call_long):${TURN_INTERRUPTED}`,
        `assistant:${TURN_INTERRUPTED}`,
        "user:are you there?",
      ]);
      expect(history[0]!.id).toBe(ids.userId);
      expect(history[1]!.id).toBe(ids.assistantId);
      expect(history.at(-1)!.id).toBe(next.id);
      expect(historyProblems(history)).toEqual([]);
      expect(await store.getTurn(ids.turnId)).toMatchObject({ status: "failed", stopReason: "error" });
      expect((await store.getTurn(handle.turnId))?.status).toBe("pending");
    });

    it("closes a turn that crashed before any model output with an assistant marker", async () => {
      const store = stores.open();
      await store.beginTurn("cli:direct", userMessage("first"));
      if (kind === "postgres") {
        // Another worker while the first is alive: the pending turn is the first one's, not dangling.
        expect(await stores.open().recoverDanglingTurns("cli:direct")).toBe(0);
      }
      // The process is gone (its lease with it); a fresh instance on the same data: as after a restart.
      await store.close();
      const restarted = stores.open();
      expect(await restarted.recoverDanglingTurns("cli:direct")).toBe(1);
      expect(await restarted.recoverDanglingTurns("cli:direct")).toBe(0);
      expect(shape(await restarted.loadHistory("cli:direct"))).toEqual(["user:first", `assistant:${TURN_INTERRUPTED}`]);
    });
  });
});
