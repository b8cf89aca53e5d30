/**
 * The one-line hint a chat channel shows for a tool call (`$ npm test`, `read notes.txt`), as
 * the Python nanobot words them; `agents.defaults.toolHintMaxLength` bounds the argument shown.
 */

/** Built-in tool → the argument that says what it does, and how the hint reads. */
const TEMPLATES: Record<string, { arg: string; render: (value: string) => string }> = {
  read_file: { arg: "path", render: (v) => `read ${v}` },
  write_file: { arg: "path", render: (v) => `write ${v}` },
  edit_file: { arg: "path", render: (v) => `edit ${v}` },
  list_dir: { arg: "path", render: (v) => `ls ${v}` },
  find_files: { arg: "pattern", render: (v) => `find ${v}` },
  grep: { arg: "pattern", render: (v) => `grep "${v}"` },
  exec: { arg: "command", render: (v) => `$ ${v}` },
  web_search: { arg: "query", render: (v) => `search "${v}"` },
  web_fetch: { arg: "url", render: (v) => `fetch ${v}` },
};

/** The Python nanobot's default. */
export const DEFAULT_TOOL_HINT_LENGTH = 40;
/** Other tools show their JSON arguments, cut to this unless toolHintMaxLength says otherwise. */
const FALLBACK_ARG_CHARS = 80;

function cut(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > max ? `${oneLine.slice(0, Math.max(1, max - 1))}…` : oneLine;
}

export function toolHint(name: string, args: Record<string, unknown>, maxLength?: number): string {
  const template = TEMPLATES[name];
  const value = template ? args[template.arg] : undefined;
  if (template && typeof value === "string" && value !== "") return template.render(cut(value, maxLength ?? DEFAULT_TOOL_HINT_LENGTH));
  const json = JSON.stringify(args);
  const max = maxLength ?? FALLBACK_ARG_CHARS;
  return `${name}(${json.length > max ? `${json.slice(0, max)}…` : json})`;
}
