/**
 * Matrix end to end through the built CLI: `nanobot gateway` with a Python-style
 * `$NANOBOT_HOME/config.json` enabling `channels.matrix` against the fake homeserver and a
 * scripted fake LLM. A user's direct message is answered in the room, `nanobot channels list
 * --json` reports the channel connected, end-to-end encryption (`e2eeEnabled: true`) starts,
 * and the Python key nanobot cannot honour (`sasVerification: true`) is warned about at
 * start-up. Needs `npm run build`.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";
import { MATRIX_BOT, MATRIX_TOKEN, startFakeMatrix } from "./helpers/fake-matrix.js";
import type { FakeMatrix } from "./helpers/fake-matrix.js";
import { waitFor } from "./helpers/harness.js";

let root: string | undefined;
let llm: FakeLLM | undefined;
let matrix: FakeMatrix | undefined;
let gateway: RunningNanobot | undefined;

afterEach(async () => {
  await gateway?.stop();
  await matrix?.close();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
  gateway = matrix = llm = root = undefined;
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("matrix through the gateway", () => {
  it("answers a direct message with the model's reply and shows as connected", async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-matrix-e2e-"));
    const home = join(root, "home");
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    await mkdir(home, { recursive: true });
    llm = await startFakeLLM();
    matrix = await startFakeMatrix();
    const alice = "@alice:fake.test";
    const dm = "!dm-alice:fake.test";
    matrix.addRoom(dm, [alice, MATRIX_BOT.id]);
    const port = await freePort();
    // As the Python nanobot writes it (camelCase keys), with its Matrix defaults spelled out.
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        providers: { custom: { apiBase: llm.openaiBaseURL, apiKey: "sk-fake-matrix-e2e-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace } },
        gateway: { port },
        channels: {
          sendProgress: false,
          matrix: {
            enabled: true,
            homeserver: matrix.url,
            userId: MATRIX_BOT.id,
            accessToken: MATRIX_TOKEN,
            deviceId: "NANOBOTDEVICE",
            e2eeEnabled: true,
            sasVerification: true,
            allowFrom: [alice],
            groupPolicy: "open",
            groupAllowFrom: [],
            allowRoomMentions: false,
            maxMediaBytes: 20971520,
          },
        },
      }),
    );
    const env = { HOME: root, NANOBOT_HOME: home };
    gateway = startNanobot(["gateway"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/, 60_000);
    await gateway.waitFor(/channels\.matrix\.sasVerification is ignored/, 10_000);
    // End-to-end encryption started: the bot's device published its keys.
    await waitFor(() => matrix!.keys.devices(MATRIX_BOT.id).includes("NANOBOTDEVICE"), "the bot's device keys", 30_000);

    llm.enqueue({ text: "Hello **Alice**, from the model." });
    matrix.userSends(dm, alice, { msgtype: "m.text", body: "hi bot" });
    const answer = await waitFor(() => matrix!.messages.find((m) => m.body === "Hello **Alice**, from the model."), "the answer in the room", 60_000);
    expect(answer).toMatchObject({ roomId: dm });
    expect(answer.content).toMatchObject({ format: "org.matrix.custom.html", formatted_body: "<p>Hello <strong>Alice</strong>, from the model.</p>" });
    const prompt = llm.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(prompt.messages.at(-1))).toContain("hi bot");

    const list = await runNanobot(["channels", "list", "--json"], { cwd: root, env });
    expect(list.code, list.stderr).toBe(0);
    const report = JSON.parse(list.stdout) as { source: string; channels: Array<Record<string, unknown>> };
    expect(report.source).toBe("gateway");
    expect(report.channels).toEqual([{ name: "matrix", type: "matrix", enabled: true, connected: true }]);
  }, 120_000);
});
