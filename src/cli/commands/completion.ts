/**
 * `nanobot completion bash|zsh|fish`: a shell completion script for every command, subcommand
 * and option, generated from the program itself (so it never lists a command that is not
 * there). Load it with `source <(nanobot completion bash)` (or zsh), or
 * `nanobot completion fish | source`; the README says where to put it for good.
 */
import type { Command, Option } from "commander";
import { InvalidArgumentError } from "commander";
import type { CliContext } from "../context.js";

const SHELLS = ["bash", "zsh", "fish"] as const;
type Shell = (typeof SHELLS)[number];

/** One command of the tree, by its path of names (`""` is the program, `"cron add"` a subcommand). */
interface CommandNode {
  path: string;
  description: string;
  subcommands: Array<{ name: string; description: string }>;
  options: Array<{ flags: string[]; description: string; takesValue: boolean }>;
}

function optionsOf(cmd: Command): CommandNode["options"] {
  const opts = (cmd.options as readonly Option[]).filter((o) => !o.hidden);
  const flags = (o: Option): string[] => [o.short, o.long].filter((f): f is string => typeof f === "string");
  const own = opts.map((o) => ({ flags: flags(o), description: o.description, takesValue: o.required || o.optional }));
  return [...own, { flags: ["-h", "--help"], description: "show help", takesValue: false }];
}

/** Every command of the program, depth first. */
export function commandTree(program: Command): CommandNode[] {
  const out: CommandNode[] = [];
  const visit = (cmd: Command, path: string): void => {
    const subs = cmd.commands.filter((c) => c.name() !== "help");
    out.push({
      path,
      description: cmd.description(),
      subcommands: subs.map((c) => ({ name: c.name(), description: c.description() })),
      options: optionsOf(cmd),
    });
    for (const sub of subs) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, "");
  return out;
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();
const singleQuoted = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

export function bashScript(tree: readonly CommandNode[]): string {
  const words = tree
    .map((n) => `    ${JSON.stringify(n.path)}) echo ${singleQuoted([...n.subcommands.map((s) => s.name), ...n.options.flatMap((o) => o.flags)].join(" "))} ;;`)
    .join("\n");
  const subs = tree.filter((n) => n.path !== "").map((n) => JSON.stringify(n.path)).join("|");
  const valued = [...new Set(tree.flatMap((n) => n.options.filter((o) => o.takesValue).flatMap((o) => o.flags)))].join("|");
  return `# nanobot completion for bash: source <(nanobot completion bash)
_nanobot_words() {
  case "$1" in
${words}
  esac
}
_nanobot_is_command() {
  case "$1" in
    ${subs || '""'}) return 0 ;;
  esac
  return 1
}
_nanobot() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmdpath="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    if _nanobot_is_command "\${cmdpath:+$cmdpath }$w"; then cmdpath="\${cmdpath:+$cmdpath }$w"; fi
  done
  case "$prev" in
    ${valued || "--nothing"}) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
  esac
  COMPREPLY=($(compgen -W "$(_nanobot_words "$cmdpath")" -- "$cur"))
}
complete -o default -F _nanobot nanobot
`;
}

export function zshScript(tree: readonly CommandNode[]): string {
  const zshItem = (name: string, description: string): string => singleQuoted(`${name.replace(/:/g, "\\:")}:${oneLine(description)}`);
  const cases = tree
    .map((n) => {
      const items = [...n.subcommands.map((s) => zshItem(s.name, s.description)), ...n.options.flatMap((o) => o.flags.map((f) => zshItem(f, o.description)))];
      return `    ${JSON.stringify(n.path)}) items=(${items.join(" ")}) ;;`;
    })
    .join("\n");
  const subs = tree.filter((n) => n.path !== "").map((n) => JSON.stringify(n.path)).join("|");
  return `#compdef nanobot
# nanobot completion for zsh: source <(nanobot completion zsh), or save it as _nanobot in your $fpath
_nanobot() {
  local cmdpath="" w i
  local -a items
  for ((i = 2; i < CURRENT; i++)); do
    w=\${words[i]}
    [[ $w == -* ]] && continue
    case "\${cmdpath:+$cmdpath }$w" in
      ${subs || '""'}) cmdpath="\${cmdpath:+$cmdpath }$w" ;;
    esac
  done
  case "$cmdpath" in
${cases}
  esac
  _describe 'nanobot' items
}
if [ "$funcstack[1]" = "_nanobot" ]; then
  _nanobot "$@"
else
  compdef _nanobot nanobot
fi
`;
}

export function fishScript(tree: readonly CommandNode[]): string {
  const lines = ["# nanobot completion for fish: nanobot completion fish | source", "complete -c nanobot -f"];
  for (const n of tree) {
    const names = n.path === "" ? [] : n.path.split(" ");
    // The command's own words seen, and none of its subcommands yet.
    const seen = names.map((w) => `__fish_seen_subcommand_from ${w}`);
    const notDeeper = n.subcommands.length ? [`not __fish_seen_subcommand_from ${n.subcommands.map((s) => s.name).join(" ")}`] : [];
    const condition = n.path === "" ? "__fish_use_subcommand" : [...seen, ...notDeeper].join("; and ");
    for (const s of n.subcommands) lines.push(`complete -c nanobot -n ${singleQuoted(condition)} -a ${s.name} -d ${singleQuoted(oneLine(s.description))}`);
    for (const o of n.options) {
      const flags = o.flags.map((f) => (f.startsWith("--") ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`)).join(" ");
      lines.push(`complete -c nanobot -n ${singleQuoted(condition)} ${flags}${o.takesValue ? " -r -F" : ""} -d ${singleQuoted(oneLine(o.description))}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

function parseShell(value: string): Shell {
  if (!(SHELLS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${SHELLS.join(", ")}`);
  return value as Shell;
}

export function registerCompletionCommand(program: Command, ctx: CliContext): void {
  program
    .command("completion")
    .description("print a shell completion script (bash, zsh or fish)")
    .argument("<shell>", `one of ${SHELLS.join(", ")}`, parseShell)
    .addHelpText(
      "after",
      "\nLoad it now:  source <(nanobot completion bash)   (zsh: the same with zsh; fish: nanobot completion fish | source)\n" +
        "For good:     nanobot completion bash > ~/.local/share/bash-completion/completions/nanobot\n" +
        "              nanobot completion zsh > \"${fpath[1]}/_nanobot\"\n" +
        "              nanobot completion fish > ~/.config/fish/completions/nanobot.fish\n",
    )
    .action((shell: Shell, _opts: unknown, cmd: Command) => {
      // The root program, with every command registered: the tree is read from it.
      let root = cmd;
      while (root.parent) root = root.parent;
      const tree = commandTree(root);
      ctx.io.stdout.write(shell === "bash" ? bashScript(tree) : shell === "zsh" ? zshScript(tree) : fishScript(tree));
    });
}
