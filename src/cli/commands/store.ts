/**
 * `nanobot store migrate|copy`: the session store itself. `migrate` brings the configured store
 * (or `--url`) to the current schema ahead of a deployment; `copy` moves every session, thread,
 * message and turn from one store to another (SQLite `state.db` ⇄ PostgreSQL).
 */
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { nanobotHome } from "../../config/paths.js";
import { ConfigError } from "../../core/errors.js";
import {
  PgSessionStore,
  SCHEMA_VERSION,
  SessionStoreError,
  copyStore,
  describeLocation,
  openSessionStore,
  parseStoreLocation,
  storeLocation,
} from "../../session/index.js";
import type { StoreLocation } from "../../session/index.js";
import type { CliContext } from "../context.js";

/** The store the configuration names (`NANOBOT_STORE_URL`, then `store.url`, else `<home>/state.db`). */
export async function configuredStoreLocation(ctx: CliContext, command: Command): Promise<StoreLocation> {
  const home = nanobotHome(ctx.io.env, ctx.io.cwd);
  if (ctx.io.env["NANOBOT_STORE_URL"]?.trim()) return storeLocation({ env: ctx.io.env, home });
  const loaded = await ctx.loadConfig(command);
  return storeLocation({ url: loaded.config.store?.url, env: ctx.io.env, home });
}

export function registerStoreCommand(program: Command, ctx: CliContext): void {
  const store = program.command("store").description("migrate the session store, copy sessions between stores");

  store
    .command("migrate")
    .description("apply pending schema migrations to the configured store (or --url)")
    .option("--url <url>", "a postgres:// URL or a SQLite file instead of the configured store")
    .action(async (opts: { url?: string }, command: Command) => {
      const location = opts.url ? parse(opts.url, ctx) : await configuredStoreLocation(ctx, command);
      if (location.kind === "postgres") {
        const pg = new PgSessionStore({ url: location.url });
        try {
          const result = await pg.migrate();
          const applied = result.applied.length ? `applied ${result.applied.map((v) => `v${v}`).join(", ")}` : "already up to date";
          ctx.io.stdout.write(`PostgreSQL store ${describeLocation(location)}: schema v${result.version} (${applied})\n`);
        } finally {
          await pg.close();
        }
        return;
      }
      // Opening a SQLite store migrates it.
      await openSessionStore(location).close();
      ctx.io.stdout.write(`SQLite store ${location.path}: schema v${SCHEMA_VERSION}\n`);
    });

  store
    .command("copy")
    .description("copy every session (threads, messages, turns) from one store to another; sessions already in the target are replaced")
    .requiredOption("--from <store>", "source: a postgres:// URL or a SQLite file (e.g. ~/.nanobot/state.db)")
    .requiredOption("--to <store>", "target: a postgres:// URL or a SQLite file")
    .action(async (opts: { from: string; to: string }) => {
      const from = parse(opts.from, ctx);
      const to = parse(opts.to, ctx);
      if (describeLocation(from) === describeLocation(to)) throw new ConfigError("--from and --to name the same store");
      if (from.kind === "sqlite" && !existsSync(from.path)) throw new SessionStoreError(`no SQLite database at ${from.path}`);
      const source = openSessionStore(from);
      const target = openSessionStore(to);
      try {
        const result = await copyStore(source, target);
        ctx.io.stdout.write(
          `copied ${result.sessions} sessions (${result.threads} threads, ${result.messages} messages, ${result.turns} turns) ` +
            `from ${describeLocation(from)} to ${describeLocation(to)}\n`,
        );
      } finally {
        await source.close();
        await target.close();
      }
    });
}

function parse(text: string, ctx: CliContext): StoreLocation {
  try {
    return parseStoreLocation(text, ctx.io.cwd);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}
