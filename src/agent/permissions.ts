/**
 * An agent's `permissions` with the Go nanobot's meaning: an ordered map of permission →
 * `allow` | `deny`; for a permission the last entry naming it (or `*`) wins; nothing matching
 * means allowed. Go's permissions name its system tools; here they map onto nanobot's
 * built-ins. A built-in is offered when any permission that grants it is allowed (as in Go,
 * `write` grants edit_file too); a built-in no permission names (web_search, message) is
 * governed by its own name and `*`.
 */

export type Permissions = Readonly<Record<string, string>>;

/** Go permission → the nanobot built-ins it grants. */
export const PERMISSION_TOOLS: Readonly<Record<string, readonly string[]>> = {
  bash: ["exec"],
  read: ["read_file", "list_dir"],
  write: ["write_file", "edit_file"],
  edit: ["edit_file"],
  glob: ["find_files"],
  grep: ["grep"],
  webFetch: ["web_fetch"],
  skills: ["skills"],
};

/** Go's `IsAllowed`: the last entry naming `perm` or `*` decides; none means allowed. */
export function isPermissionAllowed(permissions: Permissions | undefined, perm: string): boolean {
  if (!permissions) return true;
  const entries = Object.entries(permissions);
  for (let i = entries.length - 1; i >= 0; i--) {
    const [key, value] = entries[i]!;
    if (key === perm || key === "*") return value === "allow";
  }
  return true;
}

/** The permissions that grant a built-in tool (its own name when no Go permission does). */
export function permissionsFor(tool: string): string[] {
  const perms = Object.entries(PERMISSION_TOOLS)
    .filter(([, tools]) => tools.includes(tool))
    .map(([perm]) => perm);
  return perms.length > 0 ? perms : [tool];
}

/** Whether the agent's permissions let the model use this built-in. */
export function isBuiltinAllowed(permissions: Permissions | undefined, tool: string): boolean {
  if (!permissions || Object.keys(permissions).length === 0) return true;
  return permissionsFor(tool).some((perm) => isPermissionAllowed(permissions, perm));
}

/** Why a call to a denied built-in is refused (what the model reads). */
export function deniedReason(tool: string): string {
  return `the agent's permissions do not allow '${tool}' (${permissionsFor(tool).join(" / ")}: deny)`;
}

/** nanobot's built-in tool names (the turn-bound ones included) that permissions govern. */
const BUILTIN_TOOLS = [
  ...new Set([...Object.values(PERMISSION_TOOLS).flat(), "web_search", "message", "spawn", "cron", "create_goal", "complete_goal"]),
];

/**
 * The built-ins the agent's permissions deny, with the reason a call to one gets (the engine
 * answers it instead of "not found"); undefined when the agent has no permissions.
 */
export function refusedBuiltins(permissions: Permissions | undefined, offered: readonly { name: string }[]): Record<string, string> | undefined {
  if (!permissions || Object.keys(permissions).length === 0) return undefined;
  const names = new Set(offered.map((t) => t.name));
  const refused = BUILTIN_TOOLS.filter((tool) => !names.has(tool) && !isBuiltinAllowed(permissions, tool)).map((tool) => [tool, deniedReason(tool)] as const);
  return refused.length > 0 ? Object.fromEntries(refused) : undefined;
}
