/**
 * Peer: Vercel AI SDK (`ai@6.0.326`) `ToolLoopAgent` with `@ai-sdk/openai-compatible@2.0.92`
 * pointed at the fake. Histories are model messages kept by the caller (`response.messages`).
 */
import type { Contender, ContenderSetup } from "./types.js";
import { INSTRUCTIONS, SLOW_TOOL_MS, peerImport, priorTurns, sleep } from "./types.js";

type ModelMessage = Record<string, unknown>;
interface GenerateResult {
  text: string;
  response: { messages: ModelMessage[] };
}
interface AiModule {
  ToolLoopAgent: new (settings: Record<string, unknown>) => { generate(options: { messages: ModelMessage[] }): Promise<GenerateResult> };
  tool(config: Record<string, unknown>): object;
  stepCountIs(n: number): unknown;
}
interface CompatModule {
  createOpenAICompatible(options: Record<string, unknown>): (model: string) => object;
}
interface ZodLike {
  z: { object(shape: Record<string, unknown>): unknown; string(): unknown };
}

export async function createContender(setup: ContenderSetup): Promise<Contender> {
  const ai = await peerImport<AiModule>("ai");
  const { createOpenAICompatible } = await peerImport<CompatModule>("@ai-sdk/openai-compatible");
  const { z } = await peerImport<ZodLike>("zod");
  const provider = createOpenAICompatible({ name: "bench", baseURL: setup.baseURL, apiKey: "bench" });
  const lookup = ai.tool({
    description: "Looks a key up in the benchmark table.",
    inputSchema: z.object({ key: z.string() }),
    execute: async ({ key }: { key: string }) => `value of ${key}`,
  });
  const slowRead = ai.tool({
    description: "Reads a file slowly (200 ms).",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }: { path: string }) => {
      await sleep(SLOW_TOOL_MS);
      return `contents of ${path}`;
    },
  });
  const agent = (model: string, tools: Record<string, object>) =>
    new ai.ToolLoopAgent({ model: provider(model), instructions: INSTRUCTIONS, tools, stopWhen: ai.stepCountIs(20), maxRetries: 0 });
  const loopAgent = agent("bench-loop", { lookup });
  const parallelAgent = agent("bench-parallel", { slow_read: slowRead });
  const chatAgent = agent("bench-chat", { lookup });
  let loopHistory: ModelMessage[] = [];
  const sessions = new Map<string, ModelMessage[]>();
  const user = (content: string): ModelMessage => ({ role: "user", content });

  return {
    async prepareLoop(history) {
      loopHistory = priorTurns(history).map((t) => ({ role: t.role, content: t.text }));
    },
    async loopTurn(index) {
      return (await loopAgent.generate({ messages: [...loopHistory, user(`Question ${index}: look up alpha and beta.`)] })).text;
    },
    async parallelTurn() {
      return (await parallelAgent.generate({ messages: [user("Read the four files.")] })).text;
    },
    async chatTurn(session, content) {
      const messages = [...(sessions.get(session) ?? []), user(content)];
      const result = await chatAgent.generate({ messages });
      sessions.set(session, [...messages, ...result.response.messages]);
      return result.text;
    },
  };
}
