/**
 * Sustained goals: an objective kept active on a session. After each completed turn the loop
 * starts another one with a goal-continue prompt while the goal is active, at most
 * `MAX_GOAL_ROUNDS` times; the agent ends it with `update_goal`, the user with `/goal clear`
 * or `/stop`. The state lives in the session's metadata, so it survives restarts.
 */
import { z } from "zod";
import type { SessionStore } from "../session/types.js";
import type { TurnReply, TurnRequest } from "./turn-processor.js";
import { defineTool } from "../tools/builtin/define-tool.js";
import type { Tool } from "../tools/tool.js";

export const MAX_GOAL_ROUNDS = 12;

export type GoalStatus = "active" | "done" | "abandoned" | "exhausted";

export interface GoalState {
  objective: string;
  status: GoalStatus;
  /** Continuation turns run so far. */
  rounds: number;
  createdAt: number;
  note?: string;
}

export function readGoal(metadata: Record<string, unknown> | null | undefined): GoalState | undefined {
  const goal = metadata?.goal;
  if (typeof goal !== "object" || goal === null) return undefined;
  const g = goal as Partial<GoalState>;
  if (typeof g.objective !== "string" || typeof g.status !== "string") return undefined;
  return { objective: g.objective, status: g.status, rounds: typeof g.rounds === "number" ? g.rounds : 0, createdAt: g.createdAt ?? 0, ...(g.note ? { note: g.note } : {}) };
}

export async function setGoal(store: SessionStore, sessionKey: string, goal: GoalState | undefined): Promise<void> {
  await store.ensureSession(sessionKey);
  await store.updateMetadata(sessionKey, { goal });
}

export function newGoal(objective: string, now = Date.now()): GoalState {
  return { objective, status: "active", rounds: 0, createdAt: now };
}

/** The system-prompt section for an active goal. */
export function goalPrompt(goal: GoalState | undefined): string {
  if (goal?.status !== "active") return "";
  return [
    "# Active goal",
    goal.objective,
    "Keep working towards this goal across turns. When it is achieved (or cannot be), call update_goal with status done (or abandoned) and a short note.",
  ].join("\n\n");
}

export function goalContinuePrompt(goal: GoalState): string {
  return `[Goal] Continue working on the goal: ${goal.objective}\nRound ${goal.rounds} of ${MAX_GOAL_ROUNDS}. Take the next concrete step; call update_goal when the goal is done.`;
}

const createGoalSchema = z.object({ objective: z.string().min(1).describe("What must be achieved, concretely.") });
const updateGoalSchema = z.object({ status: z.enum(["active", "done", "abandoned"]), note: z.string().optional().describe("Progress or outcome, one line.") });

const GOAL_TOOLS: ReadonlySet<string> = new Set(["create_goal", "update_goal"]);

/** `create_goal` and `update_goal`, bound to one session. */
export function createGoalTools(store: SessionStore, sessionKey: string): Tool[] {
  return [
    defineTool({
      name: "create_goal",
      description: "Set a goal you will keep working on across several turns until you mark it done with update_goal.",
      schema: createGoalSchema,
      async run(args) {
        await setGoal(store, sessionKey, newGoal(args.objective));
        return `Goal set: ${args.objective}`;
      },
    }),
    defineTool({
      name: "update_goal",
      description: "Mark the session's goal as done or abandoned (ends the goal), or keep it active with a progress note.",
      schema: updateGoalSchema,
      async run(args) {
        const goal = readGoal(await store.sessionMetadata(sessionKey));
        if (!goal) return { content: [{ type: "text", text: "Error: there is no goal on this session; use create_goal first." }], isError: true };
        await setGoal(store, sessionKey, { ...goal, status: args.status, ...(args.note ? { note: args.note } : {}) });
        return `Goal ${args.status === "active" ? "updated" : `marked ${args.status}`}.`;
      },
    }),
  ];
}

/**
 * The request of the next goal round after `reply`, or undefined when the goal is not active,
 * the turn did not complete (an aborted turn never continues, so `/stop` ends the work) or the
 * rounds are used up (the goal is then marked exhausted). `/goal` itself starts round 1.
 * With `goalActiveAtStart` known false, a turn that neither ran `/goal` nor called a goal tool
 * cannot have one (the session's turns run one at a time), so the metadata is not read again.
 */
export async function nextGoalRound(
  store: SessionStore,
  sessionKey: string,
  request: TurnRequest,
  reply: TurnReply,
  known: { goalActiveAtStart?: boolean } = {},
): Promise<TurnRequest | undefined> {
  if (reply.stopReason !== "completed" || (reply.command && reply.command !== "goal")) return undefined;
  const mayHaveGoal = known.goalActiveAtStart !== false || reply.command === "goal" || reply.toolsUsed.some((name) => GOAL_TOOLS.has(name));
  if (!mayHaveGoal) return undefined;
  const goal = readGoal(await store.sessionMetadata(sessionKey));
  if (goal?.status !== "active" || (reply.command === "goal" && goal.rounds > 0)) return undefined;
  if (goal.rounds >= MAX_GOAL_ROUNDS) {
    await setGoal(store, sessionKey, { ...goal, status: "exhausted" });
    return undefined;
  }
  const next = { ...goal, rounds: goal.rounds + 1 };
  await setGoal(store, sessionKey, next);
  return { ...request, content: goalContinuePrompt(next), channel: request.channel ?? "system" };
}
