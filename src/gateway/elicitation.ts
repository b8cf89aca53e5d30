/**
 * MCP elicitation in the web UI: while a chat stream runs, a server's question becomes an
 * `elicitation` event on that stream; the page answers with `POST /api/elicitation/:id`
 * (behind the same bearer auth as the rest of `/api`). A form answer that does not fit the
 * requested schema is refused with 400 and the question stays open, so the user can fix it.
 * Timeout, the turn ending or the server giving up close the question (`elicitation_end`).
 */
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { describeProblems, formFields, validateElicitationContent } from "../mcp/elicitation-schema.js";
import type { ElicitationAsker } from "../mcp/elicitation-router.js";
import type { ElicitationRequest, ElicitationResponse } from "../mcp/types.js";
import { ApiError } from "./errors.js";
import type { TurnDeadline } from "./turn-deadline.js";
import type { WebEvent } from "./web-messages.js";

interface OpenQuestion {
  request: ElicitationRequest;
  finish(answer: ElicitationResponse): void;
}

const ACTIONS = new Set(["accept", "decline", "cancel"]);

export class PendingElicitations {
  private readonly open = new Map<string, OpenQuestion>();

  /** Questions waiting for an answer (tests, status). */
  get size(): number {
    return this.open.size;
  }

  /**
   * An asker for one chat stream: each question is emitted on `emit` and waits for its answer;
   * the turn's request deadline is held meanwhile.
   */
  askerFor(emit: (event: WebEvent) => void, deadline?: TurnDeadline): ElicitationAsker {
    return (request, signal) =>
      new Promise<ElicitationResponse>((resolve) => {
        const id = randomUUID();
        const release = deadline?.hold();
        const onAbort = (): void => finish({ action: "cancel" });
        const finish = (answer: ElicitationResponse): void => {
          if (!this.open.delete(id)) return;
          signal.removeEventListener("abort", onAbort);
          release?.();
          emit({ type: "elicitation_end", id, action: answer.action });
          resolve(answer);
        };
        this.open.set(id, { request, finish });
        signal.addEventListener("abort", onAbort, { once: true });
        emit({
          type: "elicitation",
          id,
          server: request.server,
          message: request.message,
          mode: request.mode,
          ...(request.mode === "url" ? { url: request.url } : { fields: formFields(request.requestedSchema), requestedSchema: request.requestedSchema }),
        });
        if (signal.aborted) onAbort();
      });
  }

  /** Settles question `id` with the user's answer; throws ApiError (404, 400) otherwise. */
  answer(id: string, body: unknown): void {
    const question = this.open.get(id);
    if (!question) throw new ApiError(404, `no open question ${id}: it was answered, timed out or its turn ended`, "invalid_request_error", "not_found");
    const { action, content } = (body ?? {}) as { action?: unknown; content?: unknown };
    if (typeof action !== "string" || !ACTIONS.has(action)) {
      throw new ApiError(400, 'action must be "accept", "decline" or "cancel"', "invalid_request_error", null, "action");
    }
    if (action !== "accept") return question.finish({ action: action as "decline" | "cancel" });
    if (question.request.mode === "url") return question.finish({ action: "accept" });
    const answer = content ?? {};
    const problems = validateElicitationContent(question.request.requestedSchema, answer);
    if (problems.length > 0) throw new ApiError(400, `invalid answer: ${describeProblems(problems)}`, "invalid_request_error", "invalid_answer", "content");
    question.finish({ action: "accept", content: answer as NonNullable<ElicitationResponse["content"]> });
  }
}

/** `POST /elicitation/:id` with `{ action, content? }`, mounted under `/api`. */
export function elicitationRoutes(pending: PendingElicitations): Hono {
  const app = new Hono();
  app.post("/elicitation/:id", async (c) => {
    const body: unknown = await c.req.json().catch(() => null);
    pending.answer(c.req.param("id"), body);
    return c.json({ ok: true });
  });
  return app;
}
