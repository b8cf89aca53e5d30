/**
 * MCP elicitation in the interactive CLI: the server's message, then accept / decline / cancel,
 * then one line per form field (options by number or name, blank = default or left out).
 * A value that does not fit its field is explained and asked again; `/decline` or `/cancel` at
 * any field ends the form. Runs on the REPL's own readline, one question at a time.
 */
import type { Interface } from "node:readline";
import type { ElicitationAsker } from "../../mcp/elicitation-router.js";
import { fieldProblem, formFields, parseFieldInput } from "../../mcp/elicitation-schema.js";
import type { ElicitField, ElicitValue } from "../../mcp/elicitation-schema.js";
import type { ElicitationRequest, ElicitationResponse } from "../../mcp/types.js";
import type { Colors } from "../io.js";

export interface CliAskerOptions {
  rl: Interface;
  print: (text: string) => void;
  colors: Colors;
  /** Called before a question takes the terminal (stops the tool spinner). */
  beforeAsk?: () => void;
}

class Ended extends Error {
  constructor(readonly action: "decline" | "cancel") {
    super(action);
  }
}

function question(rl: Interface, query: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Ended("cancel"));
    const onAbort = (): void => reject(new Ended("cancel"));
    signal.addEventListener("abort", onAbort, { once: true });
    rl.question(query, { signal }, (answer) => {
      signal.removeEventListener("abort", onAbort);
      resolve(answer);
    });
  });
}

function hint(field: ElicitField): string {
  const parts: string[] = [];
  if (field.kind === "boolean") parts.push("y/n");
  if (field.kind === "multiselect") parts.push("numbers or names, comma-separated");
  if ((field.kind === "number" || field.kind === "integer") && (field.minimum !== undefined || field.maximum !== undefined)) {
    parts.push(`${field.minimum ?? "…"}–${field.maximum ?? "…"}`);
  }
  if (field.kind === "string" && field.format) parts.push(field.format);
  if (field.default !== undefined) parts.push(`default ${Array.isArray(field.default) ? field.default.join(", ") : String(field.default)}`);
  else if (!field.required) parts.push("optional");
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}

async function askChoice(opts: CliAskerOptions, query: string, signal: AbortSignal): Promise<ElicitationResponse["action"]> {
  for (;;) {
    const answer = (await question(opts.rl, query, signal)).trim().toLowerCase();
    if (answer === "" || answer === "a" || answer === "accept") return "accept";
    if (answer === "d" || answer === "decline") return "decline";
    if (answer === "c" || answer === "cancel") return "cancel";
    opts.print(opts.colors.yellow("  answer a, d or c"));
  }
}

async function askField(opts: CliAskerOptions, field: ElicitField, signal: AbortSignal): Promise<ElicitValue | undefined> {
  const { colors, print } = opts;
  if (field.description) print(colors.dim(`  ${field.description}`));
  if (field.kind === "select" || field.kind === "multiselect") {
    field.options.forEach((o, i) => print(colors.dim(`    ${i + 1}) ${o.label}${o.label !== o.value ? ` [${o.value}]` : ""}`)));
  }
  const query = `  ${colors.bold(field.label)}${field.required ? "*" : ""}${colors.dim(hint(field))}: `;
  for (;;) {
    const raw = await question(opts.rl, query, signal);
    const command = raw.trim().toLowerCase();
    if (command === "/decline") throw new Ended("decline");
    if (command === "/cancel") throw new Ended("cancel");
    const parsed = parseFieldInput(field, raw);
    if ("error" in parsed) {
      print(colors.yellow(`  ${parsed.error}`));
      continue;
    }
    if (parsed.value === undefined) {
      if (!field.required) return undefined;
      print(colors.yellow(`  ${field.label} is required`));
      continue;
    }
    const problem = fieldProblem(field, parsed.value);
    if (!problem) return parsed.value;
    print(colors.yellow(`  ${field.label} ${problem}`));
  }
}

async function askOnce(opts: CliAskerOptions, request: ElicitationRequest, signal: AbortSignal): Promise<ElicitationResponse> {
  const { colors, print } = opts;
  opts.beforeAsk?.();
  print(`${colors.cyan("?")} ${colors.bold(request.server)} asks: ${request.message}`);
  if (request.mode === "url") {
    print(`  ${colors.underline(request.url ?? "")}`);
    const action = await askChoice(opts, `  open this link? ${colors.dim("(a)ccept, (d)ecline, (c)ancel [a]")} `, signal);
    return { action };
  }
  const action = await askChoice(opts, `  answer? ${colors.dim("(a)ccept, (d)ecline, (c)ancel [a]")} `, signal);
  if (action !== "accept") return { action };
  print(colors.dim("  (* = required; /decline or /cancel to stop)"));
  const content: Record<string, ElicitValue> = {};
  for (const field of formFields(request.requestedSchema)) {
    const value = await askField(opts, field, signal);
    if (value !== undefined) content[field.name] = value;
  }
  return { action: "accept", content };
}

const OUTCOME = { accept: "answer sent", decline: "declined", cancel: "cancelled" } as const;

/** An asker for the REPL; questions from parallel tool calls wait their turn. */
export function createCliAsker(opts: CliAskerOptions): ElicitationAsker {
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    const run = queue.then(async (): Promise<ElicitationResponse> => {
      try {
        const answer = await askOnce(opts, request, signal);
        opts.print(opts.colors.dim(`  ${OUTCOME[answer.action]}`));
        return answer;
      } catch (err) {
        if (!(err instanceof Ended)) throw err;
        if (!signal.aborted) opts.print(opts.colors.dim(`  ${OUTCOME[err.action]}`));
        return { action: err.action };
      }
    });
    queue = run.catch(() => undefined);
    return run;
  };
}
