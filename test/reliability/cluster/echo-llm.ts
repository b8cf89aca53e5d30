/**
 * A fake OpenAI Chat Completions server for cluster runs where many turns of many sessions hit
 * it at once, in no fixed order (the scripted fake's single queue cannot serve that). It answers
 * from the request itself: `answer: <last user text>`, so a stored answer names its question.
 * A user text containing `[read <path>]` first gets a `read_file` call for that path, then (once
 * the tool result is in the request) the answer. JSON or SSE, as the request asks; every answer
 * waits `delayMs` (a model's latency, so turns overlap and a kill lands mid-turn).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface EchoLLM {
  /** `http://127.0.0.1:PORT/v1` */
  baseURL: string;
  /** Model requests answered so far. */
  requests(): number;
  close(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content?: unknown;
}

export function answerFor(question: string): string {
  return `answer: ${question}`;
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === "object" && "text" in p ? String((p as { text: unknown }).text) : "")).join("");
  return "";
}

/** The next step for a conversation: a `read_file` call, or the final answer. */
function step(messages: ChatMessage[]): { call?: { path: string }; answer?: string } {
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const question = lastUser >= 0 ? text(messages[lastUser]!.content) : "";
  const read = /\[read ([^\]]+)\]/.exec(question);
  const toolAfter = messages.slice(lastUser + 1).some((m) => m.role === "tool");
  if (read && !toolAfter) return { call: { path: read[1]! } };
  return { answer: answerFor(question) };
}

function completion(model: string, s: ReturnType<typeof step>, n: number): object {
  const calls = s.call ? [{ id: `call_${n}`, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path: s.call.path }) } }] : undefined;
  return {
    id: `chatcmpl-echo-${n}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: calls ? { role: "assistant", content: null, tool_calls: calls } : { role: "assistant", content: s.answer }, finish_reason: calls ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 },
  };
}

function sse(model: string, s: ReturnType<typeof step>, n: number): string {
  const base = { id: `chatcmpl-echo-${n}`, object: "chat.completion.chunk", created: 1_700_000_000, model };
  const chunk = (delta: object, finish: string | null): string => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let out = chunk({ role: "assistant", content: "" }, null);
  if (s.call) {
    out += chunk({ tool_calls: [{ index: 0, id: `call_${n}`, type: "function", function: { name: "read_file", arguments: JSON.stringify({ path: s.call.path }) } }] }, null);
    out += chunk({}, "tool_calls");
  } else {
    out += chunk({ content: s.answer }, null);
    out += chunk({}, "stop");
  }
  out += `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 } })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

export async function startEchoLLM(options: { delayMs?: number } = {}): Promise<EchoLLM> {
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model?: string; stream?: boolean; messages?: ChatMessage[] };
      const n = ++count;
      const s = step(body.messages ?? []);
      const model = body.model ?? "test-model";
      setTimeout(() => {
        if (res.destroyed) return;
        if (body.stream) res.writeHead(200, { "content-type": "text/event-stream" }).end(sse(model, s, n));
        else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completion(model, s, n)));
      }, options.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
