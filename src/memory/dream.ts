/**
 * Dream: the LLM reads the history entries it has not processed yet and updates the durable
 * files (MEMORY.md, SOUL.md, USER.md) with what is worth keeping. Its cursor (the last history
 * entry processed) advances only when the run completes, so a failed dream is retried later
 * with the same entries.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../core/errors.js";
import { systemMessage, userMessage } from "../core/message-helpers.js";
import type { LanguageModel } from "../core/llm.js";
import type { Logger } from "../core/logger.js";
import { runAgent } from "../engine/loop/run-agent.js";
import type { AgentSpec } from "../engine/types.js";
import { createDreamTools } from "./dream-tools.js";
import { HistoryLog } from "./history-log.js";
import { DREAM_WRITABLE_FILES } from "./templates.js";
import { readWorkspaceFile } from "./workspace.js";

const CURSOR_FILE = "memory/.dream-cursor.json";
/** History entries one dream reads at most; the rest wait for the next one. */
const MAX_ENTRIES = 50;

const DREAM_PROMPT = [
  "You are the memory keeper of a personal assistant. You receive conversation summaries the",
  "assistant has not reviewed yet and the current content of its durable files. Update the files",
  "so they hold what is worth remembering long-term: MEMORY.md for facts, projects and decisions;",
  "USER.md for who the user is and their preferences; SOUL.md only when the user asked the",
  "assistant to change its personality or tone. Keep the files short and organised; merge,",
  "correct and remove outdated lines rather than appending duplicates. Use the tools to edit",
  "them. When nothing is worth keeping, change nothing. Finish with one line saying what changed.",
].join(" ");

export interface DreamOptions {
  workspace: string;
  model: LanguageModel;
  /** The generation settings of the preset Dream runs on (dream.modelOverride), else the engine's. */
  settings?: Pick<AgentSpec, "maxTokens" | "omitMaxTokens" | "temperature" | "reasoningEffort" | "contextWindow">;
  signal?: AbortSignal;
  logger?: Logger;
  maxIterations?: number;
}

export interface DreamResult {
  /** False when there was nothing new to process. */
  ran: boolean;
  /** History entries processed. */
  processed: number;
  /** The cursor after the dream (unchanged on failure). */
  cursor: number;
  /** Workspace-relative files the dream changed. */
  edited: string[];
  /** The model's closing line. */
  summary: string;
  error?: string;
}

export function readDreamCursor(workspace: string): number {
  try {
    const value = JSON.parse(readFileSync(join(workspace, CURSOR_FILE), "utf8")) as { cursor?: unknown };
    return typeof value.cursor === "number" ? value.cursor : 0;
  } catch {
    return 0;
  }
}

function writeDreamCursor(workspace: string, cursor: number): void {
  writeFileSync(join(workspace, CURSOR_FILE), `${JSON.stringify({ cursor, updatedAt: new Date().toISOString() })}\n`);
}

export async function runDream(options: DreamOptions): Promise<DreamResult> {
  const cursor = readDreamCursor(options.workspace);
  const entries = new HistoryLog(options.workspace).entriesAfter(cursor).slice(0, MAX_ENTRIES);
  if (entries.length === 0) return { ran: false, processed: 0, cursor, edited: [], summary: "" };
  const files = DREAM_WRITABLE_FILES.map((rel) => `## ${rel}\n\n${readWorkspaceFile(options.workspace, rel)?.trim() || "(empty)"}`).join("\n\n");
  const history = entries.map((e) => `- [${e.timestamp}] (${e.sessionKey}) ${e.content}`).join("\n");
  const edited = new Set<string>();
  const stream = runAgent(
    {
      model: options.model,
      ...options.settings,
      messages: [
        systemMessage(`${DREAM_PROMPT}\n\n# Current files\n\n${files}`),
        userMessage(`# Unprocessed history (${entries.length} entries)\n\n${history}`),
      ],
      tools: createDreamTools(options.workspace, edited),
      maxToolIterations: options.maxIterations ?? 10,
      workspace: options.workspace,
      log: (level, msg, data) => options.logger?.[level](msg, data),
    },
    options.signal,
  );
  try {
    const result = await stream.result();
    if (result.stopReason !== "completed") {
      const error = result.error ? errorMessage(result.error) : `dream ended with ${result.stopReason}`;
      return { ran: true, processed: 0, cursor, edited: [...edited], summary: result.content, error };
    }
    const last = entries.at(-1)?.cursor ?? cursor;
    writeDreamCursor(options.workspace, last);
    return { ran: true, processed: entries.length, cursor: last, edited: [...edited], summary: result.content.trim() };
  } catch (err) {
    return { ran: true, processed: 0, cursor, edited: [...edited], summary: "", error: errorMessage(err) };
  }
}
