/**
 * The gateway bench's floor: the least an OpenAI-compatible gateway in front of a model can do,
 * measured in the same harness as `nanobot gateway`. It reads the request, waits for one of 3
 * concurrency slots (nanobot's default gate), sends the fake a streamed Chat Completions request
 * of the same size class as nanobot's (a system prompt and ~30 KB of tool schemas, serialised
 * once), reads the SSE answer, and replies with a chat.completion and a `Server-Timing` header
 * in nanobot's shape. No session store, no prompt building, no agent loop.
 *
 * Whatever added latency this shows is the machine's and the harness's (HTTP on loopback, three
 * processes sharing 2 cores), not nanobot's. Run as `node --import tsx bench/support/minimal-relay.ts`
 * with NANOBOT_CONFIG pointing at the bench's config (the fake's URL is its custom provider);
 * prints `listening on http://127.0.0.1:PORT`.
 */
import { readFileSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";

const GATE = 3;
const config = JSON.parse(readFileSync(process.env.NANOBOT_CONFIG ?? "", "utf8")) as { providers: { custom: { apiBase: string } } };
const completionsUrl = `${config.providers.custom.apiBase.replace(/\/+$/, "")}/chat/completions`;

const toolSchema = (i: number) => ({
  type: "function",
  function: {
    name: `tool_${i}`,
    description: `Tool number ${i}. ${"It does one careful thing with the workspace. ".repeat(8)}`,
    parameters: { type: "object", properties: { path: { type: "string", description: "A workspace path. ".repeat(20) } }, required: ["path"] },
  },
});
const TOOLS = Buffer.from(JSON.stringify(Array.from({ length: 16 }, (_, i) => toolSchema(i))));
const SYSTEM = "You are a helpful assistant. ".repeat(120);

const agent = new Agent({ keepAlive: true });
let active = 0;
const waiting: (() => void)[] = [];
function acquire(): Promise<void> {
  if (active < GATE) {
    active++;
    return Promise.resolve();
  }
  return new Promise((resolve) => waiting.push(resolve));
}
function release(): void {
  const next = waiting.shift();
  if (next) next();
  else active--;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

/** Streams one completion from the fake; resolves with the answer's text. */
function complete(messages: unknown[]): Promise<string> {
  const head = Buffer.from(`${JSON.stringify({ model: "bench-chat", stream: true, stream_options: { include_usage: true }, messages }).slice(0, -1)},"tools":`);
  const tail = Buffer.from("}");
  return new Promise((resolve, reject) => {
    const req = request(completionsUrl, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": head.length + TOOLS.length + tail.length } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        let content = "";
        for (const event of text.split("\n\n")) {
          if (!event.startsWith("data: {")) continue;
          const chunk = JSON.parse(event.slice(6)) as { choices?: { delta?: { content?: string } }[] };
          content += chunk.choices?.[0]?.delta?.content ?? "";
        }
        resolve(content);
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.write(head);
    req.write(TOOLS);
    req.end(tail);
  });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  const input = JSON.parse(await readBody(req)) as { model: string; messages: unknown[] };
  const gateStart = performance.now();
  await acquire();
  const modelStart = performance.now();
  let content: string;
  try {
    content = await complete([{ role: "system", content: SYSTEM }, ...input.messages]);
  } finally {
    release();
  }
  const modelMs = performance.now() - modelStart;
  const body = JSON.stringify({
    id: "chatcmpl-relay",
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: input.model,
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  });
  res.writeHead(200, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "server-timing": `gate;dur=${modelStart - gateStart}, model;dur=${modelMs};desc="1 call", total;dur=${performance.now() - started}`,
  });
  res.end(body);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: String(error) } }));
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`listening on http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}\n`);
});
process.on("SIGTERM", () => process.exit(0));
