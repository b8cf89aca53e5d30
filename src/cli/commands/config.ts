/** `nanobot config check` and `nanobot config schema`. */
import type { Command } from "commander";
import { toFileShape } from "../../config/config-helpers.js";
import { maskSecrets } from "../../config/mask.js";
import { configJsonSchema } from "../../config/schema.js";
import { scrubSecretText } from "../../core/scrub.js";
import { printWarningsRefusingUnknownChannels } from "../channel-check.js";
import type { CliContext } from "../context.js";

export function registerConfigCommand(program: Command, ctx: CliContext): void {
  const config = program.command("config").description("check the configuration or print its JSON Schema");

  config
    .command("check")
    .description("validate the configuration and print the resolved form (secrets masked)")
    .action(async (_opts: unknown, cmd: Command) => {
      const loaded = await ctx.loadConfig(cmd);
      // A channel nanobot does not have loads everywhere else (with a warning) but fails the check.
      printWarningsRefusingUnknownChannels(ctx, loaded);
      // Masked by structure first (keys, env, headers, args), then as text: a secret value can
      // reappear under an innocent key (instructions, a description).
      ctx.io.stdout.write(scrubSecretText(`${JSON.stringify(maskSecrets(toFileShape(loaded.config)), null, 2)}\n`));
      const where = loaded.path ?? "no config file (defaults)";
      const count = loaded.warnings.length;
      ctx.io.stderr.write(`${ctx.colors.err.green("ok:")} ${where}${count ? ` (${count} warning${count > 1 ? "s" : ""})` : ""}\n`);
    });

  config
    .command("schema")
    .description("print the JSON Schema of the configuration file")
    .action(() => {
      ctx.io.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    });
}
