/**
 * The bot's messaging endpoint: its own HTTP listener on `host:port`, answering POSTs to
 * `path` (the URL registered as the Azure Bot's messaging endpoint, usually behind an HTTPS
 * reverse proxy). It is deliberately not the gateway's server: the Bot Connector authenticates
 * with a Bot Framework JWT, not the gateway's API key, and exposing the webhook must not expose
 * the gateway's API. Everything else gets 404/405.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Activities are small JSON (files come by URL); anything bigger is refused. */
export const MAX_ACTIVITY_BYTES = 1024 * 1024;

/** The handler's verdict: the HTTP status to answer with (work may continue after it). */
export type ActivityHandler = (authorization: string, activity: Record<string, unknown>) => Promise<number>;

export interface WebhookServerOptions {
  host: string;
  port: number;
  path: string;
  /** `channels.<name>` for error messages. */
  settingsPath: string;
  onActivity: ActivityHandler;
  onError: (error: unknown) => void;
}

export class WebhookServer {
  private server: Server | undefined;

  constructor(private readonly options: WebhookServerOptions) {}

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req)
        .then((status) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(status < 300 ? "{}" : JSON.stringify({ error: statusText(status) }));
        })
        .catch((error: unknown) => {
          this.options.onError(error);
          if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: "internal error" }));
        });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) => {
        const { host, port, settingsPath } = this.options;
        const why = error.code === "EADDRINUSE" ? "the port is in use" : error.message;
        reject(new Error(`${settingsPath}: cannot listen on ${host}:${port} (${why}); set ${settingsPath}.port to a free port`));
      });
      server.listen(this.options.port, this.options.host, () => resolve());
    });
    this.server = server;
  }

  /** `http://host:port` with the bound port (the listener's own address, loopback for a wildcard host). */
  url(): string | undefined {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) return undefined;
    const host = ["0.0.0.0", "::", ""].includes(this.options.host) ? "127.0.0.1" : this.options.host;
    return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}${this.options.path}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage): Promise<number> {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== this.options.path) return drain(req, 404);
    if (req.method !== "POST") return drain(req, 405);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_ACTIVITY_BYTES) return 413;
      chunks.push(chunk as Buffer);
    }
    let activity: unknown;
    try {
      activity = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return 400;
    }
    if (typeof activity !== "object" || activity === null || Array.isArray(activity)) return 400;
    return this.options.onActivity(String(req.headers.authorization ?? ""), activity as Record<string, unknown>);
  }
}

function drain(req: IncomingMessage, status: number): number {
  req.resume();
  return status;
}

function statusText(status: number): string {
  return ({ 400: "expected a JSON activity", 401: "unauthorized", 404: "not found", 405: "method not allowed", 413: "activity too large" } as Record<number, string>)[status] ?? "error";
}
