/**
 * What `nanobot agent` is asked, checked before anything starts: a blank message or session key
 * is a usage error (exit 2), never an empty turn or a blank session. With stdin not a terminal
 * and no `-m`, the whole of stdin is the one message (`echo hi | nanobot agent`,
 * `nanobot agent < prompt.md`), answered like `-m`.
 */
import type { CliContext } from "../context.js";
import type { InputStream } from "../io.js";

export interface AgentInput {
  message?: string;
  session: string;
}

/** The usage error for these options, or undefined when they are fine. */
export function agentInputError(input: AgentInput): string | undefined {
  if (input.session.trim() === "") return "the session key is empty (-s needs a key such as cli:notes)";
  if (input.message !== undefined && input.message.trim() === "") return "the message is empty (-m needs some text)";
  return undefined;
}

/** True when the message should come from stdin: no `-m` and stdin is a pipe or a file. */
export function messageFromStdin(input: AgentInput, stdin: InputStream | undefined): stdin is InputStream {
  return input.message === undefined && stdin !== undefined && stdin.isTTY !== true;
}

/** Reads stdin to its end; the message is its text with the final newline(s) dropped. */
export async function readStdinMessage(stdin: InputStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8").replace(/\s+$/, "");
}

/** One `error:` line on stderr and exit code 2 (CONTRACT.md: usage errors). */
export function usageError(ctx: CliContext, message: string): void {
  ctx.io.stderr.write(`${ctx.colors.err.red("error:")} ${message}\n`);
  ctx.exitCode = 2;
}
