/**
 * The gateway's HTTP app: health, the OpenAI-compatible API, the web UI's API and its static
 * files, behind the browser guard (Host, Origin, JSON only, CORS), body limit and bearer auth.
 * Built as a plain Hono app so tests drive it with `app.request()`; `server.ts` puts it on a
 * socket.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ActiveTurns } from "./active-turns.js";
import { bearerAuth } from "./auth.js";
import { channelRoutes } from "./channel-routes.js";
import { MCP_OAUTH_CALLBACK_PATH, mcpLoginRoutes } from "./mcp-login-routes.js";
import { browserGuard } from "./browser-guard.js";
import { PendingElicitations, elicitationRoutes } from "./elicitation.js";
import { eventRoutes } from "./event-routes.js";
import { createGatewayMetrics } from "./gateway-metrics.js";
import { PROMETHEUS_CONTENT_TYPE } from "./metrics.js";
import { ApiError, bodyTooLarge, errorResponse, shuttingDown } from "./errors.js";
import { openAIRoutes } from "./openai-routes.js";
import { parseTraceparent } from "../core/tracing/trace-context.js";
import { tracingEnabled, withRemoteParent } from "../core/tracing/tracer.js";
import { DEFAULT_MAX_BODY_BYTES } from "./types.js";
import type { GatewayDeps } from "./types.js";
import { webApiRoutes } from "./web-api.js";
import { mountWebStatic } from "./web-static.js";

export interface GatewayApp {
  app: Hono;
  turns: ActiveTurns;
  /** Refuses new work (503) and stops every running turn, resolving once each is saved. */
  drain(): Promise<void>;
}

/** Paths that need the key when one is set; the rest is `/health` and the UI's public files. */
const PROTECTED = /^\/(v1|api|mcp|metrics)(\/|$)/;

export function createGatewayApp(deps: GatewayDeps): GatewayApp {
  const turns = new ActiveTurns();
  const app = new Hono();
  let draining = false;
  const maxBytes = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  app.onError((err, c) => errorResponse(err, c, (msg, data) => deps.log?.("error", msg, data)));
  app.notFound((c) => c.json(new ApiError(404, `No route for ${c.req.method} ${c.req.path}`, "invalid_request_error", "not_found").toBody(), 404));

  app.get("/health", (c) => c.json({ status: "ok" }));
  // Before auth: a rebinding or cross-site request is refused whether or not a key is set.
  app.use("*", browserGuard(deps.hostPolicy ?? {}, { isOpen: (path) => path === "/health" }));
  // The OAuth redirect is a browser navigation without the key; its single-use `state` admits it.
  app.use("*", bearerAuth(deps.apiKey, (path) => !PROTECTED.test(path) || path === MCP_OAUTH_CALLBACK_PATH));
  app.use("*", async (c, next) => {
    if (draining && PROTECTED.test(c.req.path)) throw shuttingDown();
    return next();
  });
  // A declared Content-Length is checked from the header alone; Node's parser never reads past it.
  // Only chunked bodies go through hono's bodyLimit, which materialises a full web Request (costly
  // on every call, so not for the common case).
  const streamedLimit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw bodyTooLarge(maxBytes);
    },
  });
  app.use("*", async (c, next) => {
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      if (Number(length) > maxBytes) throw bodyTooLarge(maxBytes);
      return next();
    }
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    return streamedLimit(c, next);
  });
  // A client's W3C `traceparent` becomes the parent of the turns its request runs.
  app.use("*", (c, next) => (tracingEnabled() ? withRemoteParent(parseTraceparent(c.req.header("traceparent")), next) : next()));
  app.route("/v1", openAIRoutes(deps, turns));
  const elicitations = new PendingElicitations();
  app.route("/api", webApiRoutes(deps, turns, elicitations));
  app.route("/api", elicitationRoutes(elicitations));
  const observers = deps.observers ?? deps.processor.observers;
  if (observers) app.route("/api", eventRoutes(observers, deps.relay));
  if (deps.mcpLogins) app.route("/api", mcpLoginRoutes(deps.mcpLogins));
  const channels = deps.channels;
  if (channels) app.route("/api", channelRoutes(channels));
  const load = deps.processor.load?.bind(deps.processor);
  const metrics = createGatewayMetrics({
    observers,
    turns,
    observeStore: deps.observeStore,
    walCheckpointer: deps.walCheckpointer,
    ...(load ? { load } : {}),
  });
  app.get("/metrics", (c) => c.body(metrics.registry.render(), 200, { "content-type": PROMETHEUS_CONTENT_TYPE }));
  const mcp = deps.mcpHandler;
  if (mcp) app.all("/mcp", (c) => mcp(c.req.raw));
  mountWebStatic(app, deps.webRoot);

  return {
    app,
    turns,
    async drain() {
      draining = true;
      await turns.stopAll();
      metrics.close();
    },
  };
}
