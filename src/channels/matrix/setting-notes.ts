/**
 * Python nanobot keys of `channels.matrix` that nanobot reads but does not honour, with the
 * reason; `config check` and the gateway's start-up print them. Kept free of matrix-js-sdk so
 * `config check` does not load the SDK.
 */
export function matrixSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const notes: string[] = [];
  const key = (k: string): string => `channels.${name}.${k}`;
  if (raw.sasVerification === true) {
    notes.push(
      raw.e2eeEnabled === false
        ? `${key("sasVerification")} is ignored: emoji (SAS) verification needs end-to-end encryption, and ${key("e2eeEnabled")} is false`
        : `${key("sasVerification")} is ignored: nanobot's Matrix channel encrypts but does not do interactive (emoji/SAS) verification or cross-signing, so its device stays unverified in users' clients (messages are still end-to-end encrypted)`,
    );
  }
  if (raw.syncStopGraceSeconds !== undefined && raw.syncStopGraceSeconds !== null) {
    notes.push(`${key("syncStopGraceSeconds")} is ignored: nanobot cancels the /sync long poll at once when the channel stops, so there is nothing to wait for`);
  }
  if (typeof raw.password === "string" && raw.password && (raw.accessToken || raw.deviceId)) {
    notes.push(`${key("password")} is set, so ${key("accessToken")} and ${key("deviceId")} are ignored (password login, as the Python nanobot)`);
  }
  return notes;
}
