/**
 * `nanobot channels login weixin` through the built CLI against the fake iLink API: the QR code
 * is printed in the terminal, the status is polled until the phone confirms, and the bot token
 * lands in `<home>/weixin/account.json` (the Python nanobot's file), where the channel reads
 * it; an expired code is replaced by a new one; the number WeChat shows is read from standard
 * input; `binded_redirect` keeps a stored login.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeWeixin } from "../channels/helpers/fake-weixin.js";
import type { FakeWeixin } from "../channels/helpers/fake-weixin.js";
import { runNanobot } from "../support/nanobot-cli.js";

let root: string | undefined;
let fake: FakeWeixin | undefined;

afterEach(async () => {
  await fake?.close();
  if (root) await rm(root, { recursive: true, force: true });
  fake = root = undefined;
});

async function setup(channels: Record<string, unknown>): Promise<{ cwd: string; env: Record<string, string>; home: string }> {
  root = await mkdtemp(join(tmpdir(), "nanobot-weixin-login-"));
  const home = join(root, "home");
  await mkdir(home, { recursive: true });
  await writeFile(join(home, "config.json"), JSON.stringify({ channels }));
  return { cwd: root, env: { HOME: root, NANOBOT_HOME: home }, home };
}

function qrRows(stdout: string, upTo: string): string[] {
  return stdout
    .slice(0, stdout.indexOf(upTo))
    .split("\n")
    .filter((line) => /^[ ▀▄█]{20,}$/.test(line));
}

describe("nanobot channels login weixin", () => {
  it("prints the QR code, waits for the phone's confirmation and stores the bot token in account.json", async () => {
    fake = await startFakeWeixin();
    const where = await setup({ weixin: { enabled: false, baseUrl: fake.url, routeTag: 7 } });
    const run = await runNanobot(["channels", "login", "weixin"], { ...where, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const url = "https://liteapp.weixin.qq.com/q/fake-qr-0001?bot_type=3";
    expect(run.stdout).toContain(url);
    expect(qrRows(run.stdout, url).length).toBeGreaterThan(10);
    expect(run.stdout).toContain("logged in: WeChat bot fakebot0001@im.bot");
    expect(run.stdout).toContain("set channels.weixin.enabled to true");
    const account = JSON.parse(await readFile(join(where.home, "weixin", "account.json"), "utf8")) as Record<string, unknown>;
    expect(account).toMatchObject({ token: "fake-bot-token-from-qr@im.bot", base_url: fake.url, get_updates_buf: "", context_tokens: {} });
    // The QR requests carry no bot token; the route tag goes along as SKRouteTag.
    expect(fake.callsOf("get_bot_qrcode")[0]!.body).toEqual({ local_token_list: [] });
    expect(fake.callsOf("get_bot_qrcode")[0]!.headers.authorization).toBeUndefined();
    expect(fake.callsOf("get_qrcode_status").map((c) => c.body.qrcode)).toEqual(["fake-qr-0001", "fake-qr-0001", "fake-qr-0001"]);
    expect(fake.callsOf("get_qrcode_status")[0]!.headers.skroutetag).toBe("7");
  }, 90_000);

  it("shows a new QR code when the first one expires", async () => {
    fake = await startFakeWeixin();
    fake.qrStatuses = [{ status: "expired" }, { status: "confirmed", bot_token: "second-token@im.bot", ilink_bot_id: "bot2@im.bot" }];
    const where = await setup({ weixin: { baseUrl: fake.url } });
    const run = await runNanobot(["channels", "login", "weixin"], { ...where, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(fake.callsOf("get_bot_qrcode")).toHaveLength(2);
    expect(run.stdout.split("Scan this with WeChat").length - 1).toBe(2);
    expect(JSON.parse(await readFile(join(where.home, "weixin", "account.json"), "utf8"))).toMatchObject({ token: "second-token@im.bot" });
  }, 90_000);

  it("asks for the number WeChat shows on the phone and sends it with the next status poll", async () => {
    fake = await startFakeWeixin();
    fake.qrStatuses = [{ status: "need_verifycode" }, { status: "confirmed", bot_token: "verified-token@im.bot", ilink_bot_id: "bot3@im.bot" }];
    const where = await setup({ weixin: { baseUrl: fake.url } });
    const run = await runNanobot(["channels", "login", "weixin"], { ...where, input: "482913\n", timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Enter the number WeChat shows on your phone:");
    expect(fake.callsOf("get_qrcode_status").map((c) => c.body.verify_code)).toEqual([undefined, "482913"]);
    expect(JSON.parse(await readFile(join(where.home, "weixin", "account.json"), "utf8"))).toMatchObject({ token: "verified-token@im.bot" });
  }, 90_000);

  it("keeps a stored login the server still knows (binded_redirect), offering it in local_token_list", async () => {
    fake = await startFakeWeixin();
    fake.qrStatuses = [{ status: "binded_redirect" }];
    const where = await setup({ weixin: { baseUrl: fake.url, stateDir: "~/wx-state" } });
    await mkdir(join(where.env.HOME!, "wx-state"), { recursive: true });
    await writeFile(join(where.env.HOME!, "wx-state", "account.json"), JSON.stringify({ token: "stored-token@im.bot", base_url: fake.url }));
    const run = await runNanobot(["channels", "login", "weixin"], { ...where, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("already logged in");
    expect(fake.callsOf("get_bot_qrcode")[0]!.body).toEqual({ local_token_list: ["stored-token@im.bot"] });
  }, 90_000);
});
