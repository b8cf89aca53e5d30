/** Channels, gateway, API server, publishing and declared environment variables. */
import { z } from "zod";
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

export const gatewaySchema = z.looseObject({
  host: str().default("127.0.0.1"),
  port: port().default(18790),
  apiKey: str().optional().describe("Required when host is not a loopback address"),
  heartbeat: z.looseObject({ enabled: bool().optional(), intervalS: positiveInt().optional() }).optional(),
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
  introduction: z.union([str(), z.looseObject({})]).optional(),
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
export type EnvEntry = z.output<typeof envEntrySchema>;
