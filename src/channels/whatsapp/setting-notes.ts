/**
 * Python nanobot keys of `channels.whatsapp` that nanobot reads but cannot honour, with the reason.
 */
export function whatsappSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const out: string[] = [];
  const session = ["databasePath", "lidMappings"].filter((k) => raw[k] !== undefined && raw[k] !== "");
  if (session.length) {
    out.push(`channels.${name}.${session.join(`, channels.${name}.`)} ${session.length > 1 ? "are" : "is"} ignored: they belong to the Python nanobot's WhatsApp Web (neonize) session, and nanobot speaks the WhatsApp Cloud API (accessToken, phoneNumberId)`);
  }
  const bridge = ["bridgeUrl", "bridgeToken"].filter((k) => raw[k] !== undefined && raw[k] !== "");
  if (bridge.length) {
    out.push(`channels.${name}.${bridge.join(`, channels.${name}.`)} ${bridge.length > 1 ? "are" : "is"} ignored: the WhatsApp bridge is gone from the Python nanobot too; nanobot speaks the WhatsApp Cloud API`);
  }
  return out;
}
