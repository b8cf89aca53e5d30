/** Channels, gateway, API server, publishing and declared environment variables. */
import { z } from "zod";
import { instructionsSchema } from "./schema-agents.js";
import { bool, idString, port, positiveInt, str, stringList } from "./schema-primitives.js";

/**
 * One chat channel. Each channel (telegram, slack, …) has its own settings, so only the
 * shared keys are checked and the rest passes through for the channel adapter to read.
 */
export const channelSchema = z.looseObject({
  enabled: bool().default(false),
  allowFrom: z.array(idString(), { error: "expected a list of ids" }).default([]),
  streaming: bool().optional(),
});

/**
 * `channels`: channel name → settings. The Python nanobot also keeps a few switches directly
 * here (`sendProgress`, `sendToolHints`), hence scalars are allowed beside the records.
 */
export const channelsSchema = z.record(
  z.string(),
  z.union([channelSchema, z.boolean(), z.number(), z.string()], {
    error: "expected channel settings (an object)",
  }),
);

/** `bot.example.com` or `bot.example.com:8443` (`[::1]:8080` for IPv6); no scheme, path or wildcard. */
export function allowedHost() {
  const e = 'expected a host name such as "bot.example.com" or "bot.example.com:8443" (no scheme, path or "*")';
  return z.string({ error: e }).refine((value) => {
    if (value.trim() === "" || value.includes("*")) return false;
    try {
      return new URL(`http://${value}`).host === value.trim().toLowerCase().replace(/:80$/, "");
    } catch {
      return false;
    }
  }, { error: e });
}

/** `https://app.example.com` (scheme, host, optional port), stored as the browser spells it. */
export function allowedOrigin() {
  const e = 'expected an origin such as "https://app.example.com" (scheme, host and port only; no path or "*")';
  return z
    .string({ error: e })
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value.trim().toLowerCase().replace(/\/$/, "");
      } catch {
        return false;
      }
    }, { error: e })
    .transform((value) => new URL(value).origin);
}

export const gatewaySchema = z.looseObject({
  host: str().default("127.0.0.1"),
  port: port().default(18790),
  apiKey: str().optional().describe("Required when host is not a loopback address"),
  /** Host names besides loopback and the bound address that requests may carry (DNS-rebinding guard). */
  allowedHosts: z.array(allowedHost(), { error: "expected a list of host names" }).default([]),
  /** Origins besides the gateway's own whose pages may send state-changing requests; they get CORS. */
  allowedOrigins: z.array(allowedOrigin(), { error: "expected a list of origins" }).default([]),
  heartbeat: z.looseObject({ enabled: bool().optional(), intervalS: positiveInt().optional() }).optional(),
});

/**
 * `store`: where sessions live. No `url` (or no block): SQLite `<home>/state.db`. A
 * `postgres://` URL: the PostgreSQL store, which any number of nanobot processes can share.
 * `NANOBOT_STORE_URL` in the environment wins over this key.
 */
export const storeSchema = z.strictObject({
  url: z
    .string({ error: "expected a postgres:// URL" })
    .refine((value) => /^postgres(ql)?:\/\/\S+$/i.test(value.trim()), { error: "expected a postgres:// URL (or no store.url for SQLite)" })
    .optional()
    .describe("postgres://user:password@host:5432/database; absent = SQLite <home>/state.db (env NANOBOT_STORE_URL wins)"),
  maxLeaseConnections: z
    .number({ error: "expected a whole number of connections, 1 or more" })
    .int({ error: "expected a whole number of connections, 1 or more" })
    .min(1, { error: "expected a whole number of connections, 1 or more (each running turn holds one for its session lease)" })
    .max(10_000, { error: "expected at most 10000 connections (PostgreSQL's max_connections bounds them anyway)" })
    .optional()
    .describe("PostgreSQL store: connections holding session leases at once, one per running turn (default 16); past it turns wait in arrival order"),
});

/** The Python nanobot's OpenAI-compatible API server block (`nanobot serve`). */
export const apiSchema = z.looseObject({
  host: str().optional(),
  port: port().optional(),
  timeout: positiveInt().optional(),
});

export const publishSchema = z.looseObject({
  name: str().optional(),
  description: str().optional(),
  introduction: instructionsSchema.optional().describe("Announced as experimental ai.nanobot.intro; text with ${…} or an MCP prompt"),
  version: str().optional(),
  instructions: str().optional(),
  entrypoint: stringList().optional().describe("Agent(s) published as the default entry"),
  tools: stringList().optional(),
  prompts: stringList().optional(),
  resources: stringList().optional(),
  resourceTemplates: stringList().optional(),
  mcpServers: stringList().optional(),
});

/** Go nanobot `env`: a variable name → a description, or its full definition. */
export const envEntrySchema = z.union(
  [
    str(),
    z.looseObject({
      default: str().optional(),
      description: str().optional(),
      options: stringList().optional(),
      optional: bool().optional(),
      sensitive: bool().optional(),
      useBearerToken: bool().optional(),
    }),
  ],
  { error: "expected a description string or {default, description, optional, sensitive}" },
);

export const envSchema = z.record(z.string(), envEntrySchema);

export type ChannelConfig = z.output<typeof channelSchema>;
export type GatewayConfig = z.output<typeof gatewaySchema>;
export type PublishConfig = z.output<typeof publishSchema>;
export type StoreConfig = z.output<typeof storeSchema>;
export type EnvEntry = z.output<typeof envEntrySchema>;
