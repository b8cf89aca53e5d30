/**
 * The web UI's own API under `/api`: info, the thread list of the UI's session (new, switch,
 * rename, delete), a thread's messages, a chat turn as a stream of events, and stop.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import type { AgentEvent } from "../core/events.js";
import { SessionStoreError } from "../session/types.js";
import type { ActiveTurns } from "./active-turns.js";
import type { PendingElicitations } from "./elicitation.js";
import { ApiError } from "./errors.js";
import { IdempotentRequests, idempotencyKeyOf, requestFingerprint } from "./idempotency.js";
import { modelNames } from "./openai-routes.js";
import { runGatewayTurn, turnDeadline } from "./run-turn.js";
import { DEFAULT_AGENT } from "./types.js";
import type { GatewayDeps } from "./types.js";
import { toWebEvent, toWebMessages } from "./web-messages.js";
import type { WebEvent } from "./web-messages.js";

const WEB_CHANNEL = "web";
const sessionIdSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "letters, digits, _ . - only").default("default");

/** `web:<id>`; the id comes from the request (query or body), `default` when absent. */
function webSessionKey(id: unknown): string {
  const parsed = sessionIdSchema.safeParse(id ?? undefined);
  if (!parsed.success) throw new ApiError(400, "invalid session id: letters, digits, _ . - only", "invalid_request_error", null, "session");
  return `${WEB_CHANNEL}:${parsed.data}`;
}

async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  const body: unknown = await c.req.json().catch(() => ({}));
  return body !== null && typeof body === "object" ? (body as Record<string, unknown>) : {};
}

/** Store errors name a thread that does not exist or a name already taken. */
async function storeCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SessionStoreError) throw new ApiError(404, err.message, "invalid_request_error", "not_found");
    throw err;
  }
}

const chatSchema = z.object({ message: z.string().min(1), session: z.string().optional(), agent: z.string().optional() });

export function webApiRoutes(deps: GatewayDeps, turns: ActiveTurns, elicitations?: PendingElicitations): Hono {
  const app = new Hono();
  const store = deps.store;
  const idempotent = new IdempotentRequests(store);

  app.get("/info", (c) =>
    c.json({
      agents: modelNames(deps),
      model: deps.modelLabel ?? null,
      setupHelp: deps.setupHelp ?? null,
      notices: deps.notices?.() ?? [],
      // MCP servers the user can log in to from here (the notice bar offers a button).
      mcpLogins: deps.mcpLogins?.pending() ?? [],
    }),
  );

  app.get("/threads", async (c) => {
    const key = webSessionKey(c.req.query("session"));
    await store.ensureSession(key);
    return c.json({ threads: await store.listThreads(key), running: turns.isRunning(key) });
  });

  app.post("/threads", async (c) => {
    const key = webSessionKey((await jsonBody(c)).session);
    await store.ensureSession(key);
    return c.json({ thread: await storeCall(() => store.newThread(key)) }, 201);
  });

  app.post("/threads/:id/switch", async (c) => {
    const key = webSessionKey((await jsonBody(c)).session);
    return c.json({ thread: await storeCall(() => store.switchThread(key, c.req.param("id"))) });
  });

  app.patch("/threads/:id", async (c) => {
    const name = (await jsonBody(c)).name;
    if (name !== null && typeof name !== "string") throw new ApiError(400, "name must be a string or null", "invalid_request_error", null, "name");
    const clean = typeof name === "string" && name.trim() !== "" ? name.trim() : null;
    return c.json({ thread: await storeCall(() => store.renameThread(c.req.param("id"), clean)) });
  });

  app.delete("/threads/:id", async (c) => {
    const deleted = await storeCall(() => store.deleteThread(c.req.param("id")));
    if (!deleted) throw new ApiError(404, `no thread ${c.req.param("id")}`, "invalid_request_error", "not_found");
    return c.json({ deleted: true });
  });

  app.get("/messages", async (c) => {
    const key = webSessionKey(c.req.query("session"));
    const threadId = c.req.query("thread") || undefined;
    const messages = await storeCall(() => store.loadMessages(key, threadId ? { threadId } : {}));
    return c.json({ messages: toWebMessages(messages) });
  });

  app.post("/stop", async (c) => {
    const key = webSessionKey((await jsonBody(c)).session);
    return c.json({ stopped: turns.stop(key) });
  });

  app.post("/chat", async (c) => {
    const parsed = chatSchema.safeParse(await jsonBody(c));
    if (!parsed.success) throw new ApiError(400, "message is required", "invalid_request_error", null, "message");
    const { message, agent } = parsed.data;
    const key = webSessionKey(parsed.data.session);
    const known = modelNames(deps);
    if (agent !== undefined && !known.includes(agent)) throw new ApiError(400, `unknown agent ${agent}`, "invalid_request_error", "model_not_found", "agent");
    // With an Idempotency-Key (the UI sends one per message and retries with it when the
    // connection drops), a repeat never runs a second turn: it gets the first one's answer.
    const idempotencyKey = idempotencyKeyOf(c.req.header("idempotency-key"));
    const fingerprint = requestFingerprint({ message, agent, session: key });
    if (idempotencyKey !== undefined) await idempotent.check(key, idempotencyKey, fingerprint);
    return streamSSE(c, async (stream) => {
      const client = new AbortController();
      stream.onAbort(() => client.abort());
      let chain = Promise.resolve();
      const warned = new Set<string>();
      const emit = (event: WebEvent): void => {
        if (event.type === "warning") warned.add(event.message);
        chain = chain.then(() => stream.writeSSE({ event: event.type, data: JSON.stringify(event) }));
      };
      // An MCP server's question during this turn comes to this stream (see elicitation.ts).
      const deadline = turnDeadline(deps);
      const unregister = elicitations && deps.elicitation?.register(key, elicitations.askerFor(emit, deadline));
      try {
        const request = { sessionKey: key, content: message, agent: agent === DEFAULT_AGENT ? undefined : agent, channel: WEB_CHANNEL };
        const options = {
          signal: client.signal,
          deadline,
          onEvent: (e: AgentEvent) => {
            const w = toWebEvent(e);
            if (w) emit(w);
          },
        };
        // A keyed turn goes on when its connection drops: the UI's retry collects the answer.
        const { reply, timedOut, replayed } =
          idempotencyKey === undefined
            ? { ...(await runGatewayTurn(deps, turns, request, options)), replayed: false }
            : await idempotent.run(key, idempotencyKey, fingerprint, (keyed) =>
                runGatewayTurn(deps, turns, { ...request, messageId: keyed.messageId, ...(keyed.resume ? { resumeMessageId: keyed.messageId } : {}) }, { ...options, signal: undefined }),
              );
        // A reply's warnings normally came as events already; any that did not are sent before `done`.
        for (const message of reply.warnings ?? []) if (!warned.has(message)) emit({ type: "warning", message });
        const error = timedOut ? "the turn took too long and was stopped" : reply.error;
        emit({ type: "done", content: reply.content, stopReason: reply.stopReason, toolsUsed: reply.toolsUsed, ...(error ? { error } : {}), ...(replayed ? { replayed } : {}) });
      } catch (err) {
        emit({ type: "error", message: err instanceof Error ? err.message : String(err) });
      } finally {
        unregister?.();
      }
      await chain.catch(() => undefined);
    });
  });

  return app;
}
