/**
 * `tools.exec.allowPatterns` on a real parse. A command passes only when tree-sitter's bash
 * grammar (the WASM build VS Code ships for the same job) sees nothing but plain simple commands
 * and every one of them fully matches a pattern.
 *
 * Plain means: simple commands joined by `;`, newlines, `&&`, `||` and `|`; each word is a bare
 * word of letters, digits and `_@%+=:,./^-`, a '…' string, or a "…" string without `$`, `` ` ``
 * or `\`, or a concatenation of those; redirections are `<`, `>`, `>>`, `&>`, `&>>` to a plain
 * word (no `/dev/…` but `/dev/null`) or `N>&M` between descriptors. Anything else is refused
 * with its name: expansions (`$x`, `${…}`, `$((…))`, globs, `~`, braces), substitutions,
 * `$'…'`, assignments, functions, subshells and groups, `if`/`case`/loops, heredocs and
 * here-strings, `&` and comments. The pattern sees the words as bash will pass them: joined by
 * one space, a word that is not bare written in single quotes.
 */
import { createRequire } from "node:module";
import type { ExecVerdict } from "./exec-guard.js";

interface TsNode {
  type: string;
  text: string;
  isError: boolean;
  isMissing: boolean;
  children: (TsNode | null)[];
}
interface TsTree {
  rootNode: TsNode;
  delete(): void;
}
interface TsParser {
  setLanguage(language: unknown): TsParser;
  parse(text: string): TsTree | null;
}
interface TsModule {
  Parser: { init(): Promise<void>; new (): TsParser };
  Language: { load(path: string): Promise<unknown> };
}

let parserPromise: Promise<TsParser> | undefined;

/** Loads the WASM runtime and the bash grammar once per process. */
function bashParser(): Promise<TsParser> {
  parserPromise ??= (async () => {
    const require = createRequire(import.meta.url);
    const ts = require("@vscode/tree-sitter-wasm") as TsModule;
    await ts.Parser.init();
    const language = await ts.Language.load(require.resolve("@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm"));
    return new ts.Parser().setLanguage(language);
  })();
  parserPromise.catch(() => {
    parserPromise = undefined;
  });
  return parserPromise;
}

const BARE = /^[\p{L}\p{N}_@%+=:,./^-]+$/u;
const REDIRECT_OPS = new Set([">", ">>", "<", "&>", "&>>"]);
const DUP_OPS = new Set([">&", "<&"]);
const SAFE_DEVICES = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"]);
/** Human names for what the rule refuses, by grammar node type. */
const NAMES: Record<string, string> = {
  command_substitution: "a command substitution",
  process_substitution: "a process substitution",
  simple_expansion: "a variable expansion",
  expansion: "a parameter expansion",
  arithmetic_expansion: "an arithmetic expansion",
  ansi_c_string: "a $'…' string",
  translated_string: 'a $"…" string',
  variable_assignment: "a variable assignment",
  function_definition: "a function definition",
  subshell: "a subshell",
  compound_statement: "a { …; } group",
  if_statement: "an if statement",
  case_statement: "a case statement",
  for_statement: "a for loop",
  c_style_for_statement: "a for loop",
  while_statement: "a while loop",
  heredoc_redirect: "a heredoc",
  herestring_redirect: "a here-string",
  declaration_command: "a declaration (export/local/declare)",
  unset_command: "unset",
  test_command: "a [[ … ]] test",
  negated_command: "a ! negation",
  comment: "a comment",
  "&": "a background job (&)",
  "|&": "|&",
};

class NotPlain extends Error {}

function refuse(node: TsNode, what?: string): never {
  throw new NotPlain(`${what ?? NAMES[node.type] ?? `"${node.text.slice(0, 40)}"`}`);
}

function kids(node: TsNode): TsNode[] {
  return node.children.filter((c): c is TsNode => c !== null);
}

/** The value bash gives a plain word, or a refusal. */
function wordValue(node: TsNode): string {
  switch (node.type) {
    case "word":
    case "number":
      if (!BARE.test(node.text)) refuse(node, `the word ${node.text} (globs, ~, braces, escapes and other special characters need quotes)`);
      return node.text;
    case "raw_string":
      return node.text.slice(1, -1);
    case "string":
      return kids(node)
        .map((part) => {
          if (part.type === '"') return "";
          if (part.type !== "string_content" || /[$`\\]/.test(part.text)) refuse(part, NAMES[part.type] ?? `${part.text} inside "…"`);
          return part.text;
        })
        .join("");
    case "concatenation":
      return kids(node).map(wordValue).join("");
    default:
      return refuse(node);
  }
}

function quoteWord(word: string): string {
  return BARE.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function checkRedirect(node: TsNode): void {
  if (node.type !== "file_redirect") refuse(node);
  const parts = kids(node);
  const op = parts.find((p) => p.type !== "file_descriptor" && p.type !== "word" && p.type !== "number" && p.type !== "string" && p.type !== "raw_string" && p.type !== "concatenation");
  const target = parts.at(-1);
  if (!op || !target || target === op) refuse(node, `the redirection ${node.text}`);
  if (DUP_OPS.has(op.type)) {
    if (!/^\d+$/.test(target.text)) refuse(node, `the redirection ${node.text}`);
    return;
  }
  if (!REDIRECT_OPS.has(op.type)) refuse(node, `the redirection ${node.text}`);
  const value = wordValue(target);
  if (value.startsWith("/dev/") && !SAFE_DEVICES.has(value)) refuse(node, `a redirection to ${value}`);
}

/** Walks statements; collects each simple command's words. */
function collect(node: TsNode, commands: string[][]): void {
  switch (node.type) {
    case "program":
    case "list":
    case "pipeline":
      for (const child of kids(node)) {
        if (child.type === ";" || child.type === "&&" || child.type === "||" || child.type === "|") continue;
        collect(child, commands);
      }
      return;
    case "redirected_statement": {
      const [body, ...redirects] = kids(node);
      if (!body) refuse(node);
      for (const r of redirects) checkRedirect(r);
      collect(body, commands);
      return;
    }
    case "command": {
      const words: string[] = [];
      for (const child of kids(node)) {
        if (child.type === "command_name") {
          const [name] = kids(child);
          if (!name) refuse(child);
          words.push(wordValue(name));
        } else if (child.type === "file_redirect") checkRedirect(child);
        else words.push(wordValue(child));
      }
      if (words.length === 0) refuse(node, "a command without a name");
      commands.push(words);
      return;
    }
    default:
      refuse(node);
  }
}

function hasBrokenSyntax(node: TsNode): boolean {
  return node.isError || node.isMissing || kids(node).some(hasBrokenSyntax);
}

/** The simple commands of `command` as canonical text, or why it is not plain. */
export async function plainCommands(command: string): Promise<{ ok: true; commands: string[] } | { ok: false; reason: string }> {
  const parser = await bashParser();
  const tree = parser.parse(command);
  if (!tree) return { ok: false, reason: "the command could not be parsed" };
  try {
    if (hasBrokenSyntax(tree.rootNode)) return { ok: false, reason: "the command has a syntax error" };
    const commands: string[][] = [];
    collect(tree.rootNode, commands);
    if (commands.length === 0) return { ok: false, reason: "there is no command" };
    return { ok: true, commands: commands.map((words) => words.map(quoteWord).join(" ")) };
  } catch (error) {
    if (error instanceof NotPlain) return { ok: false, reason: `it contains ${error.message}; with allowPatterns set only plain commands run` };
    throw error;
  } finally {
    tree.delete();
  }
}

/** Every simple command must be plain and fully match one of `patterns` (anchored). */
export async function checkAllowPatterns(command: string, patterns: readonly RegExp[]): Promise<ExecVerdict> {
  if (patterns.length === 0) return { ok: true };
  const parsed = await plainCommands(command);
  if (!parsed.ok) return { ok: false, filter: "allow", reason: parsed.reason };
  const outside = parsed.commands.find((text) => !patterns.some((re) => re.test(text)));
  if (outside !== undefined) return { ok: false, filter: "allow", reason: `"${outside}" does not match any allowed pattern` };
  return { ok: true };
}
