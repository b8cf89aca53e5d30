/**
 * Signal identifiers: a sender is known by a phone number (`+15551234567`), a UUID/ACI, or both;
 * configs write numbers with or without `+` and may join several forms with `|` (as the Python
 * nanobot's sender ids). These helpers compare them the way the Python nanobot does.
 */

/** The spellings one identifier may be listed under. */
export function idVariants(value: string): string[] {
  const raw = value.trim();
  if (!raw) return [];
  const out = [raw, raw.toLowerCase()];
  if (raw.startsWith("+") && raw.length > 1) out.push(raw.slice(1));
  else if (/^\d+$/.test(raw)) out.push(`+${raw}`);
  return [...new Set(out)];
}

/** Every spelling of every `|`-joined part of the entries. */
export function expandIds(entries: readonly string[]): string[] {
  const out = new Set<string>();
  for (const entry of entries) {
    if (entry.trim() === "*") out.add("*");
    for (const part of entry.split("|")) for (const v of idVariants(part)) out.add(v);
  }
  return [...out];
}

export function sameId(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a.flatMap(idVariants));
  return b.flatMap(idVariants).some((v) => left.has(v));
}

/** The sender's identifiers as the envelope names them, phone number first. */
export function senderParts(envelope: Record<string, unknown>): string[] {
  const parts: string[] = [];
  for (const key of ["sourceNumber", "source", "sourceUuid", "sourceServiceId", "sourceAci", "sourceACI"]) {
    const value = envelope[key];
    if (typeof value === "string" && value.trim() && !parts.includes(value.trim())) parts.push(value.trim());
  }
  const phone = parts.find((p) => p.startsWith("+") || /^\d+$/.test(p));
  return phone ? [phone, ...parts.filter((p) => p !== phone)] : parts;
}

/** Whether `chatId` names a group (base64 group ids) rather than a person. */
export function isGroupId(chatId: string): boolean {
  return chatId.includes("=") || (chatId.length > 40 && !chatId.includes("-"));
}
