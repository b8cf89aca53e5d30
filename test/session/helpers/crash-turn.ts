/**
 * Child process for the crash test: begins a turn, checkpoints an assistant tool call, prints
 * READY and waits to be SIGKILLed mid-turn. Usage: crash-turn.ts <store spec JSON> <sessionKey>
 */
import { userMessage } from "../../../src/core/index.js";
import { call, callingAssistant, openSpec } from "./temp-store.js";
import type { StoreSpec } from "./temp-store.js";

const [spec, key] = process.argv.slice(2);
if (!spec || !key) throw new Error("usage: crash-turn.ts <store spec JSON> <sessionKey>");

const store = openSpec(JSON.parse(spec) as StoreSpec);
const user = userMessage("please run the long job");
const turn = await store.beginTurn(key, user);
const assistant = callingAssistant("Starting the job.", call("call_long", "exec", { command: "sleep 1000" }));
await store.saveCheckpoint(turn.turnId, {
  phase: "awaiting_tools",
  iteration: 1,
  newMessages: [assistant],
  assistant,
  pendingToolCalls: [call("call_long", "exec", { command: "sleep 1000" })],
});
process.stdout.write(`READY ${JSON.stringify({ turnId: turn.turnId, userId: user.id, assistantId: assistant.id })}\n`);
// Keep the process (and its open database) alive until the test kills it.
setInterval(() => undefined, 60_000);
