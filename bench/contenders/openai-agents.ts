/**
 * Peer: OpenAI Agents SDK (`@openai/agents@0.20.0`) with `OpenAIChatCompletionsModel` over an
 * `OpenAI` client pointed at the fake, tracing disabled. Histories are input items kept by the
 * caller (`result.history`), as the SDK's docs show for multi-turn chats.
 */
import type { Contender, ContenderSetup } from "./types.js";
import { INSTRUCTIONS, SLOW_TOOL_MS, peerImport, priorTurns, sleep } from "./types.js";

type InputItem = Record<string, unknown>;
interface RunResult {
  finalOutput?: unknown;
  history: InputItem[];
}
interface AgentsModule {
  Agent: new (config: Record<string, unknown>) => object;
  run(agent: object, input: InputItem[]): Promise<RunResult>;
  tool(config: Record<string, unknown>): object;
  setTracingDisabled(disabled: boolean): void;
  OpenAIChatCompletionsModel: new (client: object, model: string) => object;
}
interface ZodLike {
  z: { object(shape: Record<string, unknown>): unknown; string(): unknown };
}

export async function createContender(setup: ContenderSetup): Promise<Contender> {
  const sdk = await peerImport<AgentsModule>("@openai/agents");
  const { z } = await peerImport<ZodLike>("zod");
  const OpenAI = (await peerImport<{ default: new (opts: Record<string, unknown>) => object }>("openai")).default;
  sdk.setTracingDisabled(true);
  const client = new OpenAI({ baseURL: setup.baseURL, apiKey: "bench", maxRetries: 0 });
  const lookup = sdk.tool({
    name: "lookup",
    description: "Looks a key up in the benchmark table.",
    parameters: z.object({ key: z.string() }),
    execute: async ({ key }: { key: string }) => `value of ${key}`,
  });
  const slowRead = sdk.tool({
    name: "slow_read",
    description: "Reads a file slowly (200 ms).",
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }: { path: string }) => {
      await sleep(SLOW_TOOL_MS);
      return `contents of ${path}`;
    },
  });
  const agent = (model: string, tools: object[]) =>
    new sdk.Agent({ name: "bench", instructions: INSTRUCTIONS, model: new sdk.OpenAIChatCompletionsModel(client, model), tools });
  const loopAgent = agent("bench-loop", [lookup]);
  const parallelAgent = agent("bench-parallel", [slowRead]);
  const chatAgent = agent("bench-chat", [lookup]);
  let loopHistory: InputItem[] = [];
  const sessions = new Map<string, InputItem[]>();
  const text = (r: RunResult) => String(r.finalOutput ?? "");
  const user = (content: string): InputItem => ({ role: "user", content });

  return {
    async prepareLoop(history) {
      loopHistory = priorTurns(history).map((t) =>
        t.role === "user" ? user(t.text) : { role: "assistant", status: "completed", content: [{ type: "output_text", text: t.text }] },
      );
    },
    async loopTurn(index) {
      return text(await sdk.run(loopAgent, [...loopHistory, user(`Question ${index}: look up alpha and beta.`)]));
    },
    async parallelTurn() {
      return text(await sdk.run(parallelAgent, [user("Read the four files.")]));
    },
    async chatTurn(session, content) {
      const result = await sdk.run(chatAgent, [...(sessions.get(session) ?? []), user(content)]);
      sessions.set(session, result.history);
      return text(result);
    },
  };
}
