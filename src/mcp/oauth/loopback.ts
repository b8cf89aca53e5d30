/**
 * The loopback redirect target of a login (RFC 8252): `http://127.0.0.1:<port>/callback` answers
 * the browser once, with the authorization's `code` (checked against its `state`) or its error.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { RedirectWaiters } from "./redirect-waiters.js";

/** Where an authorization's redirect lands: the CLI's loopback listener or the gateway's route. */
export interface OAuthCallback {
  redirectUrl: string;
  /** Resolves with the code of the redirect whose `state` is `state`; rejects on an error redirect. */
  waitForCode(state: string | null): Promise<string>;
  close(): Promise<void>;
}

export interface LoopbackCallback extends OAuthCallback {
  port: number;
}

/** Listens on 127.0.0.1 (`port` 0 = any free port). */
export async function startLoopbackCallback(port: number): Promise<LoopbackCallback> {
  const waiters = new RedirectWaiters();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const { status, html } = waiters.answer(url.searchParams);
    res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    redirectUrl: `http://127.0.0.1:${bound}/callback`,
    // One login at a time: a newer authorization supersedes the one before.
    waitForCode(state) {
      waiters.cancelAll("superseded by a newer authorization");
      return waiters.wait(state);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
