/**
 * What `config check` and the gateway's start-up say about `channels.msteams`. Every Python key
 * is honoured; the one note is the Python nanobot's own warning about switching off inbound
 * token checks. Kept free of botbuilder so `config check` does not load the SDK.
 */
export function msteamsSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  if (raw.validateInboundAuth !== false && raw.validate_inbound_auth !== false) return [];
  return [
    `channels.${name}.validateInboundAuth is false: the Teams webhook accepts requests without a Bot Framework token, so anyone who can reach it can post as any user — use it only for local testing`,
  ];
}
