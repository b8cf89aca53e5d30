/** `GET /api/channels`: the configured chat channels and their connections, for `nanobot channels list`. */
import { Hono } from "hono";
import type { ChannelListEntry } from "../channels/channel-manager.js";

export function channelRoutes(list: () => ChannelListEntry[]): Hono {
  const app = new Hono();
  app.get("/channels", (c) => c.json({ channels: list() }));
  return app;
}
