/**
 * The interactive REPL for real, in a tmux pane: a tiny launcher calls `runInteractive` on a
 * config written to a temp dir (the `agent` command's wiring is tested elsewhere), and the
 * tests drive it with `send-keys` and read it with `capture-pane`.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const src = (p: string): string => pathToFileURL(resolve("src", p)).href;

function entry(sessionKey: string): string {
  return `
import { loadConfig } from ${JSON.stringify(src("config/load.ts"))};
import { Runtime } from ${JSON.stringify(src("agent/runtime.ts"))};
import { createContext } from ${JSON.stringify(src("cli/context.ts"))};
import { processIo } from ${JSON.stringify(src("cli/io.ts"))};
import { runInteractive } from ${JSON.stringify(src("cli/interactive/index.ts"))};
const ctx = createContext(processIo(), "test");
const loaded = await loadConfig({ configPath: process.argv[2], env: process.env, cwd: process.cwd() });
const runtime = new Runtime({ config: loaded.config, home: loaded.home, env: process.env });
await runInteractive(ctx, { runtime, sessionKey: ${JSON.stringify(sessionKey)} });
await runtime.close();
process.stdout.write("[exited]\\n");
`;
}

export interface TmuxRepl {
  /** The temp dir: `ws/` is the workspace, `home/` the nanobot home. */
  root: string;
  tmux(...args: string[]): string;
  close(): Promise<void>;
}

export interface TmuxReplOptions {
  sessionKey: string;
  /** The config, given the temp dir (for the workspace path). */
  config: (root: string) => Record<string, unknown>;
  cols: number;
  rows: number;
  /** Extra `NAME=value` words for `env`. */
  env?: string[];
}

/** Starts the REPL in tmux session `nb` on a private tmux server. */
export async function startTmuxRepl(options: TmuxReplOptions): Promise<TmuxRepl> {
  const root = await mkdtemp(join(tmpdir(), "nanobot-repl-"));
  const socket = `nanobot-repl-${process.pid}-${Date.now()}`;
  await mkdir(join(root, "ws"));
  await writeFile(join(root, "nanobot.json"), JSON.stringify(options.config(root)));
  await writeFile(join(root, "entry.mts"), entry(options.sessionKey));
  const tmux = (...args: string[]): string => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  const env = [`HOME=${root}`, `NANOBOT_HOME=${join(root, "home")}`, ...(options.env ?? [])].join(" ");
  const cmd = `cd ${process.cwd()} && env ${env} ${process.execPath} --import tsx ${join(root, "entry.mts")} ${join(root, "nanobot.json")}; sleep 30`;
  tmux("new-session", "-d", "-s", "nb", "-x", String(options.cols), "-y", String(options.rows), cmd);
  return {
    root,
    tmux,
    async close() {
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
      await rm(root, { recursive: true, force: true });
    },
  };
}
