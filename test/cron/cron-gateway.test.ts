/**
 * Issue 21, item 2: the jobs file has one owner of truth while a gateway runs. The real
 * gateway (`bin/nanobot.js gateway`, built `dist/`) runs on a free port with the fake LLM, and
 * `nanobot cron add/remove` edit the same home from other processes at the same time.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../../src/session/sqlite-store.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM, RecordedRequest } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

let root: string;
let env: Record<string, string>;
let fake: FakeLLM;
let gateway: RunningNanobot | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-cron-gw-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-cron-gw-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws"), dream: { enabled: false } } },
      gateway: { heartbeat: { enabled: false } },
    }),
  );
  env = { HOME: root, NANOBOT_HOME: join(root, "home") };
});
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

const cli = (args: string[]) => runNanobot(args, { cwd: root, env });

/** Plenty of answers: every firing is one model request. */
const plentyOfAnswers = (): void => fake.enqueue(...Array.from({ length: 200 }, () => ({ text: "done" })));

/** How many model requests a job's firing has caused (its message is the request's last). */
function firings(name: string): number {
  return fake.requests.filter((r: RecordedRequest) => {
    const messages = (r.body as { messages?: Array<{ content?: unknown }> }).messages ?? [];
    return JSON.stringify(messages.at(-1)?.content ?? "").includes(`[Scheduled task \\"${name}\\"]`);
  }).length;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; gateway stderr:\n${gateway?.stderr() ?? ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function listed(): Promise<string[]> {
  const r = await cli(["cron", "list", "--json"]);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as Array<{ name: string }>).map((j) => j.name);
}

describe("cron while the gateway runs", () => {
  it("a job added from the CLI fires, survives the gateway's own writes, and stops firing once removed", { timeout: 90_000 }, async () => {
    plentyOfAnswers();
    gateway = startNanobot(["gateway", "--port", "0"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/);

    const added = await cli(["cron", "add", "-n", "alpha", "-m", "say alpha", "--every", "1", "-s", "cron:alpha"]);
    expect(added).toMatchObject({ code: 0, stderr: "" });
    const alphaId = /^added (\S+) /.exec(added.stdout)?.[1];
    expect(alphaId).toBeDefined();
    // The gateway noticed the edit: the job fires, and fires again (each firing is a gateway write).
    await until(() => firings("alpha") >= 2, "alpha to fire twice");

    // A second writer while the gateway keeps writing: neither change is lost.
    const beta = await cli(["cron", "add", "-n", "beta", "-m", "say beta", "--every", "1", "-s", "cron:beta"]);
    expect(beta.code).toBe(0);
    await until(() => firings("beta") >= 1, "beta to fire");
    expect((await listed()).sort()).toEqual(["alpha", "beta"]);

    const removed = await cli(["cron", "remove", alphaId as string]);
    expect(removed).toMatchObject({ code: 0, stdout: `removed ${alphaId}\n` });
    const atRemoval = firings("alpha");
    // beta firing twice more proves the gateway ticked after the removal…
    const betaNow = firings("beta");
    await until(() => firings("beta") >= betaNow + 2, "beta to fire twice more");
    // …and alpha did not fire in those ticks (one firing already on its way at removal may land).
    const after = firings("alpha");
    expect(after).toBeLessThanOrEqual(atRemoval + 1);
    const betaLater = firings("beta");
    await until(() => firings("beta") >= betaLater + 2, "beta to fire twice more again");
    expect(firings("alpha")).toBe(after);
    // The gateway's writes did not bring the removed job back.
    expect(await listed()).toEqual(["beta"]);
  });

  it("four CLI writers at once, while the gateway writes after every firing, lose nothing", { timeout: 90_000 }, async () => {
    plentyOfAnswers();
    gateway = startNanobot(["gateway", "--port", "0"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/);
    expect((await cli(["cron", "add", "-n", "busy", "-m", "tick", "--every", "1", "-s", "cron:busy"])).code).toBe(0);
    await until(() => firings("busy") >= 1, "busy to fire");
    const names = ["w1", "w2", "w3", "w4"];
    const results = await Promise.all(names.map((n) => cli(["cron", "add", "-n", n, "-m", n, "--every", "3600", "-s", `cron:${n}`])));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    const busyNow = firings("busy");
    await until(() => firings("busy") >= busyNow + 2, "busy to fire twice more");
    expect((await listed()).sort()).toEqual(["busy", ...names]);
  });

  it("removing a job while its turn runs stops that turn (saved as stopped)", { timeout: 90_000 }, async () => {
    // The first firing hangs at the model; nothing else is answered.
    fake.enqueue({ text: "never", delayMs: 60_000 });
    gateway = startNanobot(["gateway", "--port", "0"], { cwd: root, env });
    await gateway.waitFor(/listening on http:\/\/\S+/);
    const added = await cli(["cron", "add", "-n", "slow", "-m", "take your time", "--every", "1", "-s", "cron:slow"]);
    const id = /^added (\S+) /.exec(added.stdout)?.[1] as string;
    await until(() => firings("slow") === 1, "the slow job's model request");
    expect((await cli(["cron", "remove", id])).code).toBe(0);
    await until(async () => (await turnStatuses()).includes("stopped"), "the running turn to be stopped");
    expect(await turnStatuses()).toEqual(["stopped"]);
    expect(firings("slow")).toBe(1);
  });
});

/** The status of every turn in the gateway's state database, oldest first. */
async function turnStatuses(): Promise<string[]> {
  const store = new SqliteSessionStore({ path: join(root, "home", "state.db") });
  try {
    const rows = await store.snapshot((q) => q.db.prepare("SELECT status FROM turns ORDER BY started_at").all() as Array<{ status: string }>);
    return rows.map((r) => r.status);
  } finally {
    await store.close();
  }
}
