/**
 * An enabled channel of a type nanobot does not have stops `config check` and `gateway` with
 * the same error (file, key, did-you-mean); other commands only warn (resolve.ts), so a Python
 * config with `discord` still runs `agent`.
 */
import { unknownChannelTypes } from "../channels/channel-types.js";
import type { LoadedConfig } from "../config/load.js";
import { ConfigError } from "../core/errors.js";
import type { CliContext } from "./context.js";

/** Prints the load warnings; throws the config error (exit 2) when a channel cannot start. */
export function printWarningsRefusingUnknownChannels(ctx: CliContext, loaded: LoadedConfig): void {
  const bad = unknownChannelTypes(loaded.config.channels).map((p) => p.message);
  if (bad.length === 0) {
    ctx.printWarnings(loaded.warnings);
    return;
  }
  ctx.printWarnings(loaded.warnings.filter((w) => !bad.some((m) => w.endsWith(m))));
  const file = loaded.path ?? "config";
  throw new ConfigError(`${file}: ${bad.join(`\n${file}: `)}`, { file, path: "channels", expected: "channel types nanobot has" });
}
