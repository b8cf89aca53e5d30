/**
 * Per-channel settings. The config schema checks only the shared keys (`enabled`, `allowFrom`,
 * `streaming`) and passes the rest through; each channel parses its own keys here, and a
 * problem names the key as `channels.<name>.<key>`.
 */
import type { z } from "zod";
import { ConfigError } from "../core/errors.js";

/** The shared keys every channel has, as the config schema produced them. */
export interface SharedChannelSettings {
  enabled: boolean;
  allowFrom: string[];
  streaming?: boolean;
}

export function parseChannelConfig<S extends z.ZodType>(name: string, schema: S, raw: unknown): z.output<S> {
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = ["channels", name, ...issue.path.map(String)].join(".");
  throw new ConfigError(`${path}: ${issue.message}`, { path, expected: issue.message });
}
