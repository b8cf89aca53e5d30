/** Shared test scaffolding: a real temp workspace, a context, and a text-returning tool runner. */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { outputText } from "../../src/tools/builtin/define-tool.js";
import type { Tool, ToolContext, ToolOutput } from "../../src/tools/tool.js";

export interface Sandbox {
  /** Parent of everything; removed by `cleanup`. */
  root: string;
  workspace: string;
  /** A fake home directory outside the workspace. */
  home: string;
  /** A directory outside the workspace with a secret in it. */
  outside: string;
  cleanup(): Promise<void>;
}

export async function makeSandbox(): Promise<Sandbox> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), "nanobot-tools-")));
  const workspace = path.join(root, "ws");
  const home = path.join(root, "home");
  const outside = path.join(root, "outside");
  await mkdir(path.join(workspace, "memory"), { recursive: true });
  await mkdir(path.join(workspace, "sub"), { recursive: true });
  await mkdir(home, { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(workspace, "notes.txt"), "alpha\nbeta\nfoo\n");
  await writeFile(path.join(workspace, "memory", "history.jsonl"), '{"role":"user"}\n{"role":"assistant"}\n{"role":"user"}\n');
  await writeFile(path.join(outside, "secret.txt"), "top secret\n");
  await writeFile(path.join(home, "secret.txt"), "home secret\n");
  return { root, workspace, home, outside, cleanup: () => rm(root, { recursive: true, force: true }) };
}

export function ctxFor(workspace: string, turnId = "turn-1"): ToolContext {
  return { callId: "call-1", workspace, turnId };
}

export interface RunResult {
  text: string;
  isError: boolean;
  output: ToolOutput;
}

export async function runTool(tool: Tool, args: Record<string, unknown>, ctx: ToolContext, signal: AbortSignal = new AbortController().signal): Promise<RunResult> {
  const output = await tool.execute(args, ctx, signal);
  return { text: outputText(output), isError: typeof output !== "string" && output.isError === true, output };
}

export function byName(tools: readonly Tool[], name: string): Tool {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`tool ${name} not found`);
  return tool;
}
