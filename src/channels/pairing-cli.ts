/**
 * `nanobot pairing list|approve|deny|revoke`: the owner's side of pairing from a shell. Works
 * on `$NANOBOT_HOME/pairing.json`, the file a running gateway reads on every message, so an
 * approval takes effect without a restart.
 */
import type { Command } from "commander";
import { nanobotHome } from "../config/paths.js";
import type { CliContext } from "../cli/context.js";
import { runPairingCommand } from "./access/pairing-command.js";
import { PairingStore, pairingStorePath } from "./access/pairing-store.js";

export function registerPairingCommand(program: Command, ctx: CliContext): void {
  const pairing = program.command("pairing").description("approve or refuse chat senders waiting with a pairing code");
  const run = async (words: string[]): Promise<void> => {
    const store = new PairingStore({ path: pairingStorePath(nanobotHome(ctx.io.env, ctx.io.cwd)) });
    const result = await runPairingCommand(words, store);
    ctx.io.stdout.write(`${result.text}\n`);
    if (!result.ok) ctx.exitCode = 1;
  };

  pairing
    .command("list")
    .description("show pending codes and approved senders")
    .action(() => run(["list"]));
  pairing
    .command("approve")
    .description("approve the sender who was given this code")
    .argument("<code>", "8-character pairing code")
    .action((code: string) => run(["approve", code]));
  pairing
    .command("deny")
    .description("drop a pending code")
    .argument("<code>", "8-character pairing code")
    .action((code: string) => run(["deny", code]));
  pairing
    .command("revoke")
    .description("forget an approved sender")
    .argument("<sender>", "channel:senderId, channel:@username, senderId or @username")
    .action((sender: string) => run(["revoke", sender]));
}
