/**
 * Peer: `@jcheesepkg/nanobot@0.9.2`, a TypeScript port of the Python nanobot. Driven the way its
 * CLI drives it: an `AgentLoop` with an `OpenAIProvider` at the fake's base URL and
 * `processDirect(content, sessionKey)` per turn (context building, JSONL session save). Its
 * default tools stay registered, as in the product; the benchmark tools are `customTools`.
 * It builds its own system prompt from the workspace files. It keeps sessions under `$HOME/.nanobot`, so the worker runs it with HOME = a temp dir.
 * Notes: it runs tool calls one after another, and sends at most the last 200 history messages.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Contender, ContenderSetup } from "./types.js";
import { SLOW_TOOL_MS, peerImport, priorTurns, sleep } from "./types.js";

interface ChatMessage {
  role: string;
  content: string | null;
}
interface PortLoop {
  sessions: { getOrCreate(key: string): { history: ChatMessage[] }; getSessionPath(key: string): string };
  processDirect(content: string, sessionKey?: string): Promise<string>;
  stop(): void;
}
interface PortModule {
  AgentLoop: new (params: Record<string, unknown>) => PortLoop;
  MessageBus: new () => object;
  OpenAIProvider: new (params: Record<string, unknown>) => object;
}

/** The port's Tool is an abstract class it does not export; this is its shape. */
function portTool(name: string, description: string, param: string, run: (value: string) => Promise<string>) {
  const parameters = { type: "object", properties: { [param]: { type: "string" } }, required: [param] };
  return {
    name,
    description,
    parameters,
    execute: (args: Record<string, unknown>) => run(String(args[param])),
    getDefinition: () => ({ type: "function", function: { name, description, parameters } }),
  };
}

export async function createContender(setup: ContenderSetup): Promise<Contender> {
  const port = await peerImport<PortModule>("@jcheesepkg/nanobot");
  const workspace = join(setup.workDir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const tools = [
    portTool("lookup", "Looks a key up in the benchmark table.", "key", async (key) => `value of ${key}`),
    portTool("slow_read", "Reads a file slowly (200 ms).", "path", async (path) => {
      await sleep(SLOW_TOOL_MS);
      return `contents of ${path}`;
    }),
  ];
  const loopFor = (model: string) =>
    new port.AgentLoop({
      bus: new port.MessageBus(),
      provider: new port.OpenAIProvider({ apiKey: "bench", apiBase: setup.baseURL, defaultModel: model }),
      workspace,
      model,
      customTools: tools,
    });
  const loopLoop = loopFor("bench-loop");
  const parallelLoop = loopFor("bench-parallel");
  const chatLoop = loopFor("bench-chat");
  let loopHistory = 0;
  let parallelRuns = 0;

  return {
    async prepareLoop(history, count, place = "memory") {
      loopHistory = history;
      const prior: ChatMessage[] = priorTurns(history).map((t) => ({ role: t.role, content: t.text }));
      // On disk: its session file (a metadata line, then one message per line, as its own save
      // writes it), loaded by its session manager on the turn's first `getOrCreate`.
      const keys = Array.from({ length: count }, (_, i) => `bench:loop-${history}-${i}`);
      if (place === "memory") {
        for (const key of keys) loopLoop.sessions.getOrCreate(key).history = [...prior];
        return;
      }
      const now = new Date().toISOString();
      const meta = { _format: "rich", _type: "metadata", created_at: now, metadata: {}, updated_at: now };
      const file = `${[meta, ...prior].map((line) => JSON.stringify(line)).join("\n")}\n`;
      for (const key of keys) writeFileSync(loopLoop.sessions.getSessionPath(key), file);
    },
    loopTurn: (index) => loopLoop.processDirect(`Question ${index}: look up alpha and beta.`, `bench:loop-${loopHistory}-${index}`),
    parallelTurn: () => parallelLoop.processDirect("Read the four files.", `bench:parallel-${parallelRuns++}`),
    chatTurn: (session, text) => chatLoop.processDirect(text, `bench:${session}`),
  };
}
