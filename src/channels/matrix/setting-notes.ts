/**
 * Python nanobot keys of `channels.matrix` that nanobot reads but does not honour, with the
 * reason; `config check` and the gateway's start-up print them. Kept free of matrix-js-sdk so
 * `config check` does not load the SDK.
 */
export function matrixSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const notes: string[] = [];
  const key = (k: string): string => `channels.${name}.${k}`;
  if (raw.e2eeEnabled === true) {
    notes.push(
      `${key("e2eeEnabled")} is not supported by nanobot's Matrix channel (it keeps no device keys, so it can neither read nor write encrypted rooms); the bot talks in unencrypted rooms only — set it to false and use rooms without encryption`,
    );
  }
  if (raw.sasVerification === true) {
    notes.push(`${key("sasVerification")} is ignored: emoji (SAS) verification needs end-to-end encryption, which nanobot's Matrix channel does not have`);
  }
  if (raw.syncStopGraceSeconds !== undefined && raw.syncStopGraceSeconds !== null) {
    notes.push(`${key("syncStopGraceSeconds")} is ignored: nanobot cancels the /sync long poll at once when the channel stops, so there is nothing to wait for`);
  }
  if (typeof raw.password === "string" && raw.password && (raw.accessToken || raw.deviceId)) {
    notes.push(`${key("password")} is set, so ${key("accessToken")} and ${key("deviceId")} are ignored (password login, as the Python nanobot)`);
  }
  return notes;
}
