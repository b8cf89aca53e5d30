/**
 * Puts a gateway app on a socket with @hono/node-server, and takes it down gracefully:
 * refuse new work, stop running turns (saved as stopped), then close every connection.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { GatewayApp } from "./app.js";
import type { HostPolicy } from "./host-check.js";
import { installUpgradeRouter } from "./upgrade-router.js";

export interface GatewayServer {
  /** `http://host:port` with the port actually bound (useful with port 0). */
  url: string;
  host: string;
  port: number;
  /** The node server, for channels that attach to it (WebSocket upgrades). */
  httpServer: Server;
  /** Graceful: stops turns and waits until they are saved, then closes the server. Idempotent. */
  close(): Promise<void>;
}

export interface StartServerOptions {
  gateway: GatewayApp;
  host: string;
  port: number;
  /** The Host/Origin policy WebSocket upgrades are held to (the HTTP app applies its own copy). */
  hostPolicy?: HostPolicy;
}

/** Brackets IPv6 literals so the URL is valid. */
const urlHost = (host: string): string => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);

export function startGatewayServer(options: StartServerOptions): Promise<GatewayServer> {
  const { gateway, host } = options;
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: gateway.app.fetch, hostname: host, port: options.port }) as Server;
    // Every upgrade is answered: channels claim their paths, anything else gets 403/404.
    installUpgradeRouter(server, options.hostPolicy ?? {});
    const onError = (err: Error): void => reject(err);
    server.once("error", onError);
    server.once("listening", () => {
      server.off("error", onError);
      const port = (server.address() as AddressInfo).port;
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://${urlHost(host)}:${port}`,
        host,
        port,
        httpServer: server,
        close: () => (closing ??= shutdown(server, gateway)),
      });
    });
  });
}

async function shutdown(server: Server, gateway: GatewayApp): Promise<void> {
  await gateway.drain();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Keep-alive and finished SSE sockets would hold close() open otherwise.
    server.closeIdleConnections();
    setImmediate(() => server.closeAllConnections());
  });
}
