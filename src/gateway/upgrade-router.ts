/**
 * The one `upgrade` listener of a server. WebSocket upgrades never pass through the HTTP app,
 * so the same Host/Origin policy is applied here (a browser opens a WebSocket to any address
 * and only the `Origin` tells it apart), then the request goes to the endpoint registered for
 * its exact path. Every other upgrade is answered — 403 or 404 — and its socket closed: an
 * upgrade nobody claims would otherwise hang until the client gives up.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { hostRefusal, originRefusal } from "./host-check.js";
import type { HostPolicy } from "./host-check.js";

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

export class UpgradeRouter {
  private readonly routes = new Map<string, UpgradeHandler>();

  constructor(private readonly policy: HostPolicy) {}

  /** Claims an exact path (`/ws`; not `/ws/`, `//ws` or `/WS`). Returns the release. */
  add(path: string, handler: UpgradeHandler): () => void {
    if (this.routes.has(path)) throw new Error(`the WebSocket path ${path} is already in use on this server`);
    this.routes.set(path, handler);
    return () => {
      if (this.routes.get(path) === handler) this.routes.delete(path);
    };
  }

  readonly handle = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const host = request.headers.host;
    const refused = hostRefusal(host, this.policy);
    if (refused) return refuseUpgrade(socket, 403, refused, "host_not_allowed");
    const badOrigin = originRefusal(request.headers.origin, host, this.policy);
    if (badOrigin) return refuseUpgrade(socket, 403, badOrigin, "origin_not_allowed");
    const path = (request.url ?? "").split("?")[0] ?? "";
    const handler = this.routes.get(path);
    if (!handler) {
      const known = [...this.routes.keys()];
      const hint = known.length ? `; WebSocket endpoints here: ${known.join(", ")}` : "; no WebSocket channel is enabled on this server";
      return refuseUpgrade(socket, 404, `no WebSocket endpoint at ${JSON.stringify(path)}${hint}`, "not_found");
    }
    handler(request, socket, head);
  };
}

const routers = new WeakMap<Server, UpgradeRouter>();

/** The router already listening on `server`, if any (the gateway installs one at start). */
export function upgradeRouterOf(server: Server): UpgradeRouter | undefined {
  return routers.get(server);
}

/** Installs the router on `server` with `policy`, or returns the one already there. */
export function installUpgradeRouter(server: Server, policy: HostPolicy): UpgradeRouter {
  const existing = routers.get(server);
  if (existing) return existing;
  const router = new UpgradeRouter(policy);
  server.on("upgrade", router.handle);
  routers.set(server, router);
  return router;
}

const REASONS: Record<number, string> = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found" };

/** Answers an upgrade with an HTTP error (JSON, OpenAI's error shape) and closes the socket. */
export function refuseUpgrade(socket: Duplex, status: number, message: string, code: string | null = null): void {
  // A client that resets first must not crash the process: upgrade sockets have no error listener.
  socket.on("error", () => undefined);
  const body = JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } });
  const head = `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  socket.end(head + body, () => socket.destroy());
}
