/**
 * Child process for the concurrency test: writes N complete tool-using turns into one session,
 * then prints `DONE {"retries":…}`. Usage: write-turns.ts <db> <sessionKey> <turns> [busyTimeoutMs]
 */
import { assistantMessage, userMessage } from "../../../src/core/index.js";
import { silentLogger } from "../../../src/core/logger.js";
import { SqliteSessionStore } from "../../../src/session/index.js";
import { call, callingAssistant, result, runResult } from "./temp-store.js";

const [dbPath, key, count, busy] = process.argv.slice(2);
if (!dbPath || !key || !count) throw new Error("usage: write-turns.ts <db> <sessionKey> <turns> [busyTimeoutMs]");

let retries = 0;
const store = new SqliteSessionStore({
  path: dbPath,
  busyTimeoutMs: busy ? Number(busy) : undefined,
  retry: { retries: 50 },
  logger: { ...silentLogger, debug: () => void retries++ },
});
for (let i = 0; i < Number(count); i++) {
  const turn = await store.beginTurn(key, userMessage(`${key} question ${i}`));
  const a = callingAssistant("", call(`${key}-c${i}`, "ls"));
  const r = result(`${key}-c${i}`, "ls", `listing ${i}`);
  await store.saveCheckpoint(turn.turnId, { phase: "tools_completed", iteration: 1, newMessages: [a, r] });
  await store.completeTurn(turn.turnId, runResult([a, r, assistantMessage(`${key} answer ${i}`)]));
}
await store.close();
process.stdout.write(`DONE ${JSON.stringify({ retries })}\n`);
