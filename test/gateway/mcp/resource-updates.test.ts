/**
 * Issue 22, item 5 (subscriptions outside a call): a client subscribed through the gateway's
 * `/mcp` to a resource that nanobot re-exports (`publish.resources`) hears of the upstream
 * server's change on its standalone stream while no call of its own runs, and reads the new
 * content through nanobot. A resource nobody subscribed to sends nothing.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, it } from "vitest";
import { NOTE_URI } from "../../mcp/servers/watched-resource-server.js";
import { startGatewayFixture } from "../helpers.js";
import type { GatewayFixture } from "../helpers.js";

const MEMO = {
  command: process.execPath,
  args: ["--import", "tsx", join(import.meta.dirname, "..", "..", "mcp", "servers", "watched-resource-server.ts")],
  cwd: join(import.meta.dirname, "..", "..", ".."),
};

let fx: GatewayFixture | undefined;
let client: Client | undefined;

afterEach(async () => {
  await client?.close().catch(() => undefined);
  client = undefined;
  await fx?.close();
  fx = undefined;
});

async function connect(): Promise<{ client: Client; updates: string[] }> {
  fx = await startGatewayFixture({ extra: { mcpServers: { memo: MEMO }, publish: { resources: ["memo"] } } });
  const c = (client = new Client({ name: "watcher", version: "1.0.0" }));
  const updates: string[] = [];
  c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${fx.url}/mcp`)));
  return { client: c, updates };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

it("forwards a re-exported resource's change to the subscribed client, outside any call", { timeout: 60_000 }, async () => {
  const { client: c, updates } = await connect();
  expect(c.getServerCapabilities()?.resources?.subscribe).toBe(true);
  expect((await c.listResources()).resources.map((r) => r.uri)).toContain(NOTE_URI);
  const before = await c.readResource({ uri: NOTE_URI });
  expect(before.contents[0]).toMatchObject({ text: "first draft" });

  await c.subscribeResource({ uri: NOTE_URI });
  // The upstream changes the note 100 ms after the subscription; no request of ours is open.
  await until(() => updates.includes(NOTE_URI), "the resource update");
  expect(updates).toEqual([NOTE_URI]);
  const after = await c.readResource({ uri: NOTE_URI });
  expect(after.contents[0]).toMatchObject({ text: "second draft" });
});

it("sends nothing to a client that did not subscribe", { timeout: 60_000 }, async () => {
  const { client: c, updates } = await connect();
  // A second client subscribes and so triggers the change; the first one only listens.
  const other = new Client({ name: "other", version: "1.0.0" });
  const seen: string[] = [];
  other.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    seen.push(n.params.uri);
  });
  await other.connect(new StreamableHTTPClientTransport(new URL(`${fx!.url}/mcp`)));
  try {
    await c.listResources();
    await other.subscribeResource({ uri: NOTE_URI });
    await until(() => seen.length === 1, "the subscriber's update");
    await c.listResources();
    expect(updates).toEqual([]);
  } finally {
    await other.close();
  }
});
