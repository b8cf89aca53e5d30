/**
 * `GET /api/events`: the runtime's observer events as Server-Sent Events, so a UI or a script
 * can follow turns (`event: turn_completed`, data: session, turn id, usage, stop reason,
 * duration). Behind the same Host/Origin checks and `gateway.apiKey` as the rest of `/api`;
 * no CORS unless the origin is in `gateway.allowedOrigins`, so a foreign page cannot read it.
 */
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { TurnObservers } from "../agent/turn-observers.js";

/** A comment line this often keeps idle proxies from closing the stream. */
const KEEPALIVE_MS = 15_000;

export function eventRoutes(observers: TurnObservers): Hono {
  const app = new Hono();
  app.get("/events", (c) =>
    streamSSE(c, async (stream) => {
      let chain = stream.writeSSE({ event: "ready", data: "{}" });
      const unsubscribe = observers.subscribe((event) => {
        chain = chain.then(() => stream.writeSSE({ event: event.type, data: JSON.stringify(event) }));
      });
      const keepalive = setInterval(() => {
        chain = chain.then(() => stream.write(": keepalive\n\n")).then(() => undefined);
      }, KEEPALIVE_MS);
      await new Promise<void>((resolve) => stream.onAbort(resolve));
      clearInterval(keepalive);
      unsubscribe();
    }),
  );
  return app;
}
