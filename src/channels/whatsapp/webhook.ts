/**
 * The webhook Meta calls: `GET` answers the subscription check (`hub.mode=subscribe`,
 * `hub.verify_token`, echo `hub.challenge`); `POST` carries message events and is accepted only
 * with a valid `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the app secret).
 * Events are acknowledged at once and handled after the answer, so Meta never times out.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

const MAX_BODY_BYTES = 5 * 1024 * 1024;

export interface WebhookOptions {
  host: string;
  port: number;
  path: string;
  verifyToken: string;
  appSecret: string;
  onEvent: (payload: Record<string, unknown>) => void;
  onRefused: (reason: string) => void;
}

export function signatureValid(body: Buffer, header: string | undefined, secret: string): boolean {
  if (!header?.startsWith("sha256=")) return false;
  const expected = createHmac("sha256", secret).update(body).digest();
  const given = Buffer.from(header.slice("sha256=".length), "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export class WebhookServer {
  private server: Server | undefined;

  constructor(private readonly options: WebhookOptions) {}

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.server = server;
  }

  address(): { host: string; port: number } | undefined {
    const address = this.server?.address() as AddressInfo | null | undefined;
    return address ? { host: address.address, port: address.port } : undefined;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://webhook");
    if (url.pathname !== this.options.path) return void res.writeHead(404).end();
    if (req.method === "GET") {
      const ok = url.searchParams.get("hub.mode") === "subscribe" && url.searchParams.get("hub.verify_token") === this.options.verifyToken;
      if (!ok) {
        this.options.onRefused("webhook verification with a wrong hub.verify_token");
        return void res.writeHead(403).end();
      }
      return void res.writeHead(200, { "content-type": "text/plain" }).end(url.searchParams.get("hub.challenge") ?? "");
    }
    if (req.method !== "POST") return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) return void res.writeHead(413).end();
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    if (!signatureValid(body, req.headers["x-hub-signature-256"] as string | undefined, this.options.appSecret)) {
      this.options.onRefused("webhook POST without a valid X-Hub-Signature-256");
      return void res.writeHead(401).end();
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString("utf8"));
    } catch {
      return void res.writeHead(400).end();
    }
    res.writeHead(200).end();
    if (typeof payload === "object" && payload !== null && !Array.isArray(payload)) this.options.onEvent(payload as Record<string, unknown>);
  }
}
