/**
 * `nanobot channels login` through the built CLI: Signal links as a secondary device through
 * the fake signal-cli daemon (startLink → the sgnl:// URI printed as a terminal QR code →
 * finishLink → the linked number); a link the daemon refuses fails with its reason; token
 * channels say where their token goes instead.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeSignal } from "../channels/helpers/fake-signal.js";
import type { FakeSignal } from "../channels/helpers/fake-signal.js";
import { runNanobot } from "../support/nanobot-cli.js";

let root: string | undefined;
let signal: FakeSignal | undefined;

afterEach(async () => {
  await signal?.close();
  if (root) await rm(root, { recursive: true, force: true });
  signal = root = undefined;
});

async function setup(channels: Record<string, unknown>): Promise<{ cwd: string; env: Record<string, string> }> {
  root = await mkdtemp(join(tmpdir(), "nanobot-login-"));
  const home = join(root, "home");
  await mkdir(home, { recursive: true });
  await writeFile(join(home, "config.json"), JSON.stringify({ channels }));
  return { cwd: root, env: { HOME: root, NANOBOT_HOME: home } };
}

describe("nanobot channels login", () => {
  it("signal: prints the device link as a QR code, waits for the phone and reports the linked number", async () => {
    signal = await startFakeSignal({ attachmentsDir: join(tmpdir(), "unused"), linkedNumber: "+15559990009" });
    const where = await setup({ signal: { enabled: false, daemonHost: signal.host, daemonPort: signal.port } });
    const run = await runNanobot(["channels", "login", "signal", "--device-name", "my-nanobot"], { ...where, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const uri = "sgnl://linkdevice?uuid=fake-link-uuid-0001&pub_key=BfakePublicKey0001";
    expect(run.stdout).toContain(uri);
    // The QR code: rows of half-block characters before the URI.
    const qrRows = run.stdout.slice(0, run.stdout.indexOf(uri)).split("\n").filter((line) => /^[ ▀▄█]{20,}$/.test(line));
    expect(qrRows.length).toBeGreaterThan(10);
    expect(run.stdout).toContain('linked: "my-nanobot" is now a device of +15559990009');
    expect(run.stdout).toContain('set channels.signal.phoneNumber to "+15559990009"');
    expect(signal.calls.map((c) => c.method)).toEqual(["startLink", "finishLink"]);
    expect(signal.calls[1]!.params).toEqual({ deviceLinkUri: uri, deviceName: "my-nanobot" });
  }, 90_000);

  it("signal: a link the daemon refuses fails with its reason", async () => {
    signal = await startFakeSignal({ attachmentsDir: join(tmpdir(), "unused") });
    const where = await setup({ signal: { daemonHost: signal.host, daemonPort: signal.port } });
    const run = await runNanobot(["channels", "login", "signal"], { ...where, timeoutMs: 60_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("signal-cli finishLink: Link request timed out, please try again.");
  }, 90_000);

  it("token channels (Telegram, WhatsApp's Cloud API) say where their token goes", async () => {
    const where = await setup({ alerts: { type: "telegram", enabled: true, token: "1:a" } });
    const run = await runNanobot(["channels", "login", "alerts"], where);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("channels.alerts (telegram) has no QR login: it logs in with a bot token from @BotFather in channels.alerts.token");
    const whatsapp = await runNanobot(["channels", "login", "whatsapp"], where);
    expect(whatsapp.code).toBe(2);
    expect(whatsapp.stderr).toContain("channels.whatsapp (whatsapp) has no QR login: it logs in with a Cloud API access token in channels.whatsapp.accessToken");
  }, 60_000);
});
