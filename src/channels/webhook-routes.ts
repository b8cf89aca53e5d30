/**
 * Webhook endpoints on the gateway's HTTP server for channels whose platform posts events to
 * us (Slack's Events API). The gateway's HTTP app answers every request with its own auth;
 * a platform webhook carries its own proof (a signature) instead, so a claimed path is served
 * before the app sees it. Installed once per server by wrapping its `request` listeners;
 * requests to other paths go to the app unchanged.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";

export type WebhookHandler = (request: IncomingMessage, response: ServerResponse) => void;

class WebhookRoutes {
  private readonly routes = new Map<string, WebhookHandler>();

  constructor(server: Server) {
    const original = server.listeners("request") as Array<(req: IncomingMessage, res: ServerResponse) => void>;
    server.removeAllListeners("request");
    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      const path = (request.url ?? "").split("?")[0] ?? "";
      const handler = this.routes.get(path);
      if (handler) return handler(request, response);
      for (const listener of original) listener.call(server, request, response);
    });
  }

  add(path: string, handler: WebhookHandler): () => void {
    if (this.routes.has(path)) throw new Error(`the webhook path ${path} is already in use on this server`);
    this.routes.set(path, handler);
    return () => {
      if (this.routes.get(path) === handler) this.routes.delete(path);
    };
  }
}

const installed = new WeakMap<Server, WebhookRoutes>();

/** Claims an exact path (`/slack/events`) on `server`; returns the release. */
export function addWebhookRoute(server: Server, path: string, handler: WebhookHandler): () => void {
  let routes = installed.get(server);
  if (!routes) {
    routes = new WebhookRoutes(server);
    installed.set(server, routes);
  }
  return routes.add(path, handler);
}
