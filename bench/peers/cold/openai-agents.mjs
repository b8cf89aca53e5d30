// Cold start of the OpenAI Agents SDK: import, build an agent, one run against the fake LLM.
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";

setTracingDisabled(true);
const client = new OpenAI({ baseURL: process.argv[2], apiKey: "bench", maxRetries: 0 });
const agent = new Agent({ name: "bench", instructions: "You are a benchmark agent.", model: new OpenAIChatCompletionsModel(client, "bench-chat") });
const result = await run(agent, "hi");
process.stdout.write(`${result.finalOutput}\n`);
