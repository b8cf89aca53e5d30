/**
 * The heartbeat: a protected cron job that reads `HEARTBEAT.md` and works through its tasks.
 * With no tasks it does nothing at all (no LLM call). With tasks, the agent runs them in a
 * session of its own, and an evaluator step decides whether the outcome is worth a message to
 * the user — most heartbeats should stay silent.
 */
import { HEARTBEAT_FILE, readWorkspaceFile } from "../memory/workspace.js";
import { isTemplate } from "../memory/templates.js";

export const HEARTBEAT_JOB_ID = "heartbeat";
export const HEARTBEAT_SESSION_KEY = "heartbeat:default";
export const DEFAULT_HEARTBEAT_INTERVAL_S = 30 * 60;

/** Open tasks: list items (`-`, `*`, `1.`), skipping checked boxes, comments and the template. */
export function heartbeatTasks(text: string | undefined): string[] {
  if (!text || isTemplate(HEARTBEAT_FILE, text)) return [];
  const withoutComments = text.replace(/<!--[\s\S]*?-->/g, "");
  const tasks: string[] = [];
  for (const line of withoutComments.split("\n")) {
    const match = /^\s*(?:[-*+]|\d+[.)])\s+(?:\[( |x|X)\]\s+)?(.*\S)\s*$/.exec(line);
    if (!match || match[1]?.toLowerCase() === "x") continue;
    tasks.push(match[2] ?? "");
  }
  return tasks;
}

export interface HeartbeatSeams {
  workspace: string;
  /** Runs the tasks prompt as a turn and returns the agent's answer. */
  runTurn: (prompt: string) => Promise<string>;
  /** The evaluator: is this answer worth telling the user? */
  evaluate: (tasks: readonly string[], answer: string) => Promise<boolean>;
  /** Sends the answer to the user. */
  deliver: (answer: string) => Promise<void>;
}

export type HeartbeatOutcome = { status: "skipped"; detail: string } | { status: "ok"; detail: string };

export async function runHeartbeat(seams: HeartbeatSeams): Promise<HeartbeatOutcome> {
  const tasks = heartbeatTasks(readWorkspaceFile(seams.workspace, HEARTBEAT_FILE));
  if (tasks.length === 0) return { status: "skipped", detail: "no tasks in HEARTBEAT.md" };
  const prompt = [
    "[Heartbeat] Periodic check. Work through these tasks from HEARTBEAT.md now and report what you found.",
    "Say plainly when there is nothing new.",
    "",
    ...tasks.map((t) => `- ${t}`),
  ].join("\n");
  const answer = await seams.runTurn(prompt);
  if (!answer.trim()) return { status: "ok", detail: "no answer" };
  if (!(await seams.evaluate(tasks, answer))) return { status: "ok", detail: "nothing worth reporting" };
  await seams.deliver(answer);
  return { status: "ok", detail: "reported to the user" };
}

/** The evaluator's instructions; it must answer NOTIFY or SILENT. */
export const HEARTBEAT_EVALUATOR_PROMPT = [
  "You decide whether a background check result deserves a message to the user.",
  "Answer NOTIFY when it contains something new, actionable or time-sensitive; answer SILENT when it",
  "says nothing changed, nothing was found, or only restates the tasks. Answer with one word.",
].join(" ");

export function evaluatorSaysNotify(text: string): boolean {
  return /\bNOTIFY\b/i.test(text) && !/\bSILENT\b/i.test(text);
}
