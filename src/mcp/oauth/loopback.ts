/**
 * The loopback redirect target of a login (RFC 8252): `http://127.0.0.1:<port>/callback` answers
 * the browser once, with the authorization's `code` (checked against its `state`) or its error.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface LoopbackCallback {
  redirectUrl: string;
  port: number;
  /** Resolves with the code of the redirect whose `state` is `state`; rejects on an error redirect. */
  waitForCode(state: string | null): Promise<string>;
  close(): Promise<void>;
}

const PAGE = (title: string, text: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body style="font-family:sans-serif"><h1>${title}</h1><p>${text}</p></body></html>`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Listens on 127.0.0.1 (`port` 0 = any free port). */
export async function startLoopbackCallback(port: number): Promise<LoopbackCallback> {
  type Waiter = { state: string | null; resolve: (code: string) => void; reject: (err: Error) => void };
  let waiter: Waiter | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const state = url.searchParams.get("state");
    if (!waiter || (waiter.state !== null && state !== waiter.state)) {
      res.writeHead(400, { "content-type": "text/html; charset=utf-8" }).end(PAGE("Not expected", "This redirect does not belong to the login nanobot is waiting for."));
      return;
    }
    const current = waiter;
    waiter = undefined;
    const error = url.searchParams.get("error");
    const code = url.searchParams.get("code");
    if (error || !code) {
      const reason = `${error ?? "no code"}${url.searchParams.get("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`;
      res.writeHead(400, { "content-type": "text/html; charset=utf-8" }).end(PAGE("Authorization failed", escapeHtml(reason)));
      current.reject(new Error(`the authorization server refused: ${reason}`));
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE("nanobot is authorized", "You can close this tab."));
    current.resolve(code);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    redirectUrl: `http://127.0.0.1:${bound}/callback`,
    waitForCode(state) {
      waiter?.reject(new Error("superseded by a newer authorization"));
      return new Promise((resolve, reject) => {
        waiter = { state, resolve, reject };
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
