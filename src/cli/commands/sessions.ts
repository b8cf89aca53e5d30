/**
 * `nanobot sessions list|show|export|import`: inspect and move conversations stored in
 * `$NANOBOT_HOME/state.db` (or the configured PostgreSQL store). Reads never create a SQLite file; export/import speak the Python
 * nanobot's JSONL line format so sessions move between the two implementations.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Command } from "commander";
import type { Message } from "../../core/index.js";
import { SessionStoreError, exportSessionJsonl, importSessionJsonl, openSessionStore } from "../../session/index.js";
import type { PortableSessionStore, SessionInfo, ThreadInfo } from "../../session/index.js";
import type { CliContext } from "../context.js";
import { configuredStoreLocation } from "./store.js";

export function registerSessionsCommand(program: Command, ctx: CliContext): void {
  const sessions = program.command("sessions").description("list, show, export and import conversations");

  sessions
    .command("list")
    .description("list sessions, most recently active first")
    .option("--json", "print a JSON array")
    .action(async (opts: { json?: boolean }, command: Command) => {
      const list = await withStore(ctx, command, false, (store) => store.listSessions());
      if (opts.json) return write(ctx, `${JSON.stringify((list ?? []).map(sessionJson), null, 2)}\n`);
      if (!list?.length) return write(ctx, "no sessions\n");
      const rows = list.map((s) => [s.key, String(s.messageCount), iso(s.updatedAt), title(s)]);
      write(ctx, table(["KEY", "MESSAGES", "UPDATED", "TITLE"], rows));
    });

  sessions
    .command("show")
    .description("print the messages of a session's current thread")
    .argument("<key>", "session key, e.g. cli:direct")
    .option("--thread <id>", "show another thread of the session (see the thread list)")
    .option("--json", "print one JSON object")
    .action(async (key: string, opts: { json?: boolean; thread?: string }, command: Command) => {
      const found = await withStore(ctx, command, false, async (store) => {
        const session = await store.getSession(key);
        if (!session) return null;
        const threads = await store.listThreads(key);
        const messages = await store.loadMessages(key, { threadId: opts.thread });
        return { session, threads, messages };
      });
      if (!found) throw new SessionStoreError(`no session ${JSON.stringify(key)}`);
      if (opts.json) {
        const { session, threads, messages } = found;
        return write(ctx, `${JSON.stringify({ ...sessionJson(session), threads: threads.map(threadJson), messages }, null, 2)}\n`);
      }
      write(ctx, renderSession(found.session, found.threads, found.messages, ctx));
    });

  sessions
    .command("export")
    .description("write a session as JSONL (Python nanobot format)")
    .argument("<key>", "session key")
    .option("-o, --output <file>", "write to a file instead of stdout")
    .option("--thread <id>", "export another thread of the session")
    .action(async (key: string, opts: { output?: string; thread?: string }, command: Command) => {
      const text = await withStore(ctx, command, false, async (store) => {
        if (!(await store.getSession(key))) throw new SessionStoreError(`no session ${JSON.stringify(key)}`);
        return exportSessionJsonl(store, key, { threadId: opts.thread });
      });
      if (text === undefined) throw new SessionStoreError(`no session ${JSON.stringify(key)}`);
      if (!opts.output) return write(ctx, text);
      const path = resolve(ctx.io.cwd, opts.output);
      await writeFile(path, text, "utf8");
      ctx.io.stderr.write(`exported ${key} to ${path}\n`);
    });

  sessions
    .command("import")
    .description("import a JSONL session file (Python nanobot format); an existing session keeps its history archived")
    .argument("<file>", "JSONL file")
    .option("--key <key>", "store under this session key instead of the one in the file")
    .action(async (file: string, opts: { key?: string }, command: Command) => {
      const text = await readFile(resolve(ctx.io.cwd, file), "utf8");
      const result = await withStore(ctx, command, true, (store) => importSessionJsonl(store, text, { key: opts.key }));
      if (!result) return;
      const archived = result.archivedPrevious ? " (the previous thread was archived)" : "";
      write(ctx, `imported ${result.messageCount} messages into ${result.key}${archived}\n`);
    });
}

/** Opens the configured store for one command; `undefined` when reading and no SQLite file exists yet. */
async function withStore<T>(
  ctx: CliContext,
  command: Command,
  create: boolean,
  fn: (store: PortableSessionStore) => Promise<T>,
): Promise<T | undefined> {
  const location = await configuredStoreLocation(ctx, command);
  if (location.kind === "sqlite" && !create && !existsSync(location.path)) return undefined;
  const store = openSessionStore(location);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function write(ctx: CliContext, text: string): void {
  ctx.io.stdout.write(text);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function title(session: SessionInfo): string {
  const value = session.metadata["title"];
  return typeof value === "string" ? value : "";
}

function sessionJson(s: SessionInfo): Record<string, unknown> {
  return {
    key: s.key,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
    messageCount: s.messageCount,
    currentThreadId: s.currentThreadId,
    metadata: s.metadata,
  };
}

function threadJson(t: ThreadInfo): Record<string, unknown> {
  return { id: t.id, name: t.name, title: t.title, status: t.status, current: t.current, messageCount: t.messageCount, createdAt: iso(t.createdAt) };
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return `${[line(header), ...rows.map(line)].join("\n")}\n`;
}

function renderSession(session: SessionInfo, threads: ThreadInfo[], messages: Message[], ctx: CliContext): string {
  const c = ctx.colors.out;
  const out: string[] = [c.bold(session.key)];
  out.push(`threads: ${threads.map((t) => `${t.id}${t.name ? ` (${t.name})` : ""}${t.title ? ` "${t.title}"` : ""} ${t.status}${t.current ? " *" : ""}`).join(", ")}`);
  out.push("");
  for (const m of messages) out.push(`${c.cyan(`[${m.role}]`)} ${describeMessage(m)}`);
  return `${out.join("\n")}\n`;
}

function describeMessage(m: Message): string {
  const parts: string[] = [];
  for (const p of m.content) {
    if (p.type === "text") parts.push(p.text);
    else if (p.type === "toolCall") parts.push(`→ ${p.name}(${p.rawArguments})`);
    else if (p.type === "reasoning") parts.push(`(thinking: ${p.text.length} chars)`);
    else parts.push(`<${p.type}>`);
  }
  const prefix = m.role === "tool" ? `${m.toolName} ${m.toolCallId}${m.isError ? " error" : ""}: ` : "";
  return prefix + parts.join(" ");
}
