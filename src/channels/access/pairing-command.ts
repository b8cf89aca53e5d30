/**
 * `/pairing …` for the owner: the agent layer routes the slash command here (owner-only) and
 * sends back the returned text. `list`, `approve <code>`, `deny <code>`, `revoke <sender>`.
 */
import type { ApprovedSender, PairingStore, PendingPairing } from "./pairing-store.js";

export const PAIRING_USAGE = "usage: /pairing list | approve <code> | deny <code> | revoke <channel:sender|sender>";

export interface PairingCommandResult {
  /** False when nothing matched or the input was not understood. */
  ok: boolean;
  text: string;
}

/** `args` is the text after `/pairing` (or its words). Never throws for bad input: it answers. */
export async function handlePairingCommand(
  args: string | readonly string[],
  store: PairingStore,
  options: { now?: () => number } = {},
): Promise<string> {
  return (await runPairingCommand(args, store, options)).text;
}

/** Like `handlePairingCommand`, with the outcome for callers that set an exit code (the CLI). */
export async function runPairingCommand(
  args: string | readonly string[],
  store: PairingStore,
  options: { now?: () => number } = {},
): Promise<PairingCommandResult> {
  const words = typeof args === "string" ? args.trim().split(/\s+/).filter(Boolean) : args.filter(Boolean);
  const [sub, target] = words;
  const now = options.now ?? Date.now;
  const usage = { ok: false, text: PAIRING_USAGE };
  const noCode = (code: string) => ({ ok: false, text: `no pending pairing with code ${code.toUpperCase()} (expired or unknown)` });
  switch (sub?.toLowerCase()) {
    case undefined:
    case "list":
      return { ok: true, text: renderList(await store.list(), now()) };
    case "approve": {
      if (!target) return usage;
      const approved = await store.approve(target);
      return approved ? { ok: true, text: `approved ${describe(approved)}` } : noCode(target);
    }
    case "deny": {
      if (!target) return usage;
      const denied = await store.deny(target);
      return denied ? { ok: true, text: `denied ${describe(denied)}` } : noCode(target);
    }
    case "revoke": {
      if (!target) return usage;
      const removed = await store.revoke(target);
      return removed.length ? { ok: true, text: `revoked ${removed.map(describe).join(", ")}` } : { ok: false, text: `no approved sender matches ${target}` };
    }
    default:
      return usage;
  }
}

function describe(entry: PendingPairing | ApprovedSender): string {
  return `${entry.channel}:${entry.senderId}${entry.username ? ` (@${entry.username})` : ""}`;
}

function renderList(state: { pending: PendingPairing[]; approved: ApprovedSender[] }, now: number): string {
  const lines: string[] = [];
  lines.push(state.pending.length ? "pending:" : "pending: none");
  for (const p of state.pending) {
    const minutes = Math.max(0, Math.ceil((p.expiresAt - now) / 60_000));
    lines.push(`  ${p.code}  ${describe(p)}  expires in ${minutes} min`);
  }
  lines.push(state.approved.length ? "approved:" : "approved: none");
  for (const a of state.approved) lines.push(`  ${describe(a)}  since ${new Date(a.approvedAt).toISOString()}`);
  return lines.join("\n");
}
