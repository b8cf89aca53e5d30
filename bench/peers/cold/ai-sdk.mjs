// Cold start of the AI SDK: import, build a ToolLoopAgent, one generate against the fake LLM.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ToolLoopAgent } from "ai";

const provider = createOpenAICompatible({ name: "bench", baseURL: process.argv[2], apiKey: "bench" });
const agent = new ToolLoopAgent({ model: provider("bench-chat"), instructions: "You are a benchmark agent.", maxRetries: 0 });
const result = await agent.generate({ prompt: "hi" });
process.stdout.write(`${result.text}\n`);
