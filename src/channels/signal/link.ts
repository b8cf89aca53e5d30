/**
 * Linking nanobot to an existing Signal account as a secondary device, as the Signal apps link
 * a desktop: signal-cli's `startLink` hands out an `sgnl://linkdevice?…` URI (shown as a QR
 * code the phone scans under Settings → Linked devices), `finishLink` waits for the scan and
 * answers with the account's number. The daemon must run without `-a` (multi-account mode).
 */
import { SignalRpc } from "./rpc.js";

/** How long finishLink may wait for the phone to scan the code. */
const LINK_TIMEOUT_MS = 10 * 60_000;

export interface SignalLinkSteps {
  /** Shows the link URI (as a QR code) to the user. */
  show(uri: string): Promise<void> | void;
}

export async function linkSignalDevice(baseUrl: string, deviceName: string, steps: SignalLinkSteps): Promise<{ number: string }> {
  const rpc = new SignalRpc(baseUrl);
  const started = await rpc.call<{ deviceLinkUri?: unknown }>("startLink");
  const uri = started?.deviceLinkUri;
  if (typeof uri !== "string" || !uri.startsWith("sgnl://")) throw new Error(`signal-cli startLink at ${baseUrl} gave no device link URI`);
  await steps.show(uri);
  const finished = await rpc.call<{ number?: unknown }>("finishLink", { deviceLinkUri: uri, deviceName }, LINK_TIMEOUT_MS);
  return { number: typeof finished?.number === "string" ? finished.number : "" };
}
