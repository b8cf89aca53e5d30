/**
 * Node's system errors (`ENOENT: no such file or directory, open '/x'`, `listen EADDRINUSE …`)
 * as the one line a user can act on. They all mean a file or address the command was given
 * cannot be used, so the CLI treats them as usage/configuration errors (exit 2).
 */

interface SystemError {
  code: string;
  path?: string;
  syscall?: string;
  address?: string;
  port?: number;
}

function asSystemError(err: unknown): SystemError | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code) ? (err as SystemError) : undefined;
}

/** The user-facing line for a system error this CLI knows how to explain; undefined otherwise. */
export function describeSystemError(err: unknown): string | undefined {
  const e = asSystemError(err);
  if (!e) return undefined;
  const where = e.address !== undefined ? `${e.address}${e.port !== undefined ? `:${e.port}` : ""}` : undefined;
  if (e.syscall === "listen" || e.syscall === "bind") {
    if (e.code === "EADDRINUSE") return `port ${e.port ?? "?"} is in use${where ? ` (${where})` : ""}; stop the other program or use --port (or gateway.port) to pick another`;
    if (e.code === "EADDRNOTAVAIL") return `cannot listen on ${where ?? "that address"}: it is not an address of this machine (use --host)`;
    if (e.code === "EACCES") return `not allowed to listen on ${where ?? "that port"} (ports below 1024 need privileges; use --port)`;
    return undefined;
  }
  if (e.path === undefined) return undefined;
  switch (e.code) {
    case "ENOENT":
      return `${e.path}: no such file or directory`;
    case "EACCES":
    case "EPERM":
      return `${e.path}: permission denied`;
    case "EISDIR":
      return `${e.path}: is a directory, not a file`;
    case "ENOTDIR":
      return `${e.path}: a part of this path is not a directory`;
    default:
      return undefined;
  }
}
