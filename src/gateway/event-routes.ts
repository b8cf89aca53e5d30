/**
 * `GET /api/events`: the runtime's observer events as Server-Sent Events, so a UI or a script
 * can follow turns (`event: turn_completed`, data: session, turn id, usage, stop reason,
 * duration). Behind the same Host/Origin checks and `gateway.apiKey` as the rest of `/api`;
 * no CORS unless the origin is in `gateway.allowedOrigins`, so a foreign page cannot read it.
 *
 * With workers sharing a PostgreSQL store, turns run on the other workers come through the
 * cluster relay too (their `worker` names the worker that ran them), and `event: resync` says
 * the relay was cut and reconnected: turns that ended meanwhile elsewhere were not reported.
 * `?session=<key>` keeps only one session's events.
 */
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { TurnObserverEvent, TurnObservers } from "../agent/turn-observers.js";
import { TOPIC_TURN } from "../cluster/cluster-relay.js";
import type { ClusterRelay } from "../cluster/cluster-relay.js";

/** A comment line this often keeps idle proxies from closing the stream. */
const KEEPALIVE_MS = 15_000;

export function eventRoutes(observers: TurnObservers, relay?: ClusterRelay): Hono {
  const app = new Hono();
  app.get("/events", (c) =>
    streamSSE(c, async (stream) => {
      const session = c.req.query("session") || undefined;
      let chain = stream.writeSSE({ event: "ready", data: JSON.stringify(relay ? { worker: relay.workerId } : {}) });
      const write = (event: string, data: unknown): void => {
        chain = chain.then(() => stream.writeSSE({ event, data: JSON.stringify(data) }));
      };
      const onTurn = (event: TurnObserverEvent): void => {
        if (session === undefined || event.sessionKey === session) write(event.type, event);
      };
      const unsubscribe = [observers.subscribe(onTurn)];
      if (relay) {
        unsubscribe.push(
          relay.subscribe(TOPIC_TURN, (data, from) => {
            if (isTurnEvent(data)) onTurn({ ...data, worker: from });
          }),
          relay.onResync(() => write("resync", { reason: "the cluster relay reconnected; turns that ended on other workers meanwhile were not reported" })),
        );
      }
      const keepalive = setInterval(() => {
        chain = chain.then(() => stream.write(": keepalive\n\n")).then(() => undefined);
      }, KEEPALIVE_MS);
      await new Promise<void>((resolve) => stream.onAbort(resolve));
      clearInterval(keepalive);
      for (const stop of unsubscribe) stop();
    }),
  );
  return app;
}

function isTurnEvent(data: unknown): data is TurnObserverEvent {
  const event = data as Partial<TurnObserverEvent> | null;
  return typeof event === "object" && event !== null && event.type === "turn_completed" && typeof event.sessionKey === "string";
}
