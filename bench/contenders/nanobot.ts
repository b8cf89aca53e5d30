/**
 * nanobot as a library: `runAgent` (the engine) with a model from the provider registry over
 * HTTP, histories kept by the caller — the same level as the peers' `run(agent)` and
 * `agent.generate()`. `nanobot-loop.ts` drives the full product turn instead.
 */
import { assistantMessage, systemMessage, userMessage } from "../../src/core/message-helpers.js";
import type { Message } from "../../src/core/messages.js";
import type { LanguageModel } from "../../src/core/llm.js";
import { runAgent } from "../../src/engine/index.js";
import { createProviderRegistry } from "../../src/providers/registry.js";
import { lookupTool, slowReadTool } from "./nanobot-tools.js";
import type { Contender, ContenderSetup } from "./types.js";
import { INSTRUCTIONS, priorTurns } from "./types.js";

export async function createContender(setup: ContenderSetup): Promise<Contender> {
  const registry = createProviderRegistry({ providers: { custom: { apiBase: setup.baseURL, apiKey: "bench" } }, env: {} });
  const model = (name: string): LanguageModel => registry.resolveModel(`custom/${name}`, { contextWindow: 1_000_000 });
  const loopModel = model("bench-loop");
  const parallelModel = model("bench-parallel");
  const chatModel = model("bench-chat");
  const system = systemMessage(INSTRUCTIONS);
  let loopHistory: Message[] = [];
  const sessions = new Map<string, Message[]>();

  const run = async (m: LanguageModel, messages: Message[], tools = [lookupTool]) => {
    const result = await runAgent({ model: m, messages, tools, workspace: setup.workDir }).result();
    if (result.stopReason === "error") throw result.error instanceof Error ? result.error : new Error(String(result.error));
    return result;
  };

  return {
    async prepareLoop(history) {
      loopHistory = [system, ...priorTurns(history).map((t) => (t.role === "user" ? userMessage(t.text) : assistantMessage(t.text)))];
    },
    async loopTurn(index) {
      return (await run(loopModel, [...loopHistory, userMessage(`Question ${index}: look up alpha and beta.`)])).content;
    },
    async parallelTurn() {
      return (await run(parallelModel, [system, userMessage("Read the four files.")], [slowReadTool])).content;
    },
    async chatTurn(session, text) {
      const history = sessions.get(session) ?? [system];
      const messages = [...history, userMessage(text)];
      const result = await run(chatModel, messages);
      sessions.set(session, [...messages, ...result.newMessages]);
      return result.content;
    },
  };
}
