/**
 * Issue #24: webhook channels on every gateway worker. Two `nanobot gateway` processes (the
 * built CLI) share one PostgreSQL store (a throwaway schema) and one home; each has Slack in
 * Events API mode (`mode: "http"`) against the fake Slack, and its own scripted fake LLM, so
 * every answer names the worker that made it. Slack's signed POST to a follower is answered
 * there, once, and still after the follower took over as leader; the same event delivered to
 * both workers (Slack's retry reaching another worker behind a load balancer) is answered once.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { slackSignature } from "../../src/channels/slack/events-api.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { SLACK_BOT_TOKEN, startFakeSlack } from "../channels/helpers/fake-slack.js";
import type { FakeSlack } from "../channels/helpers/fake-slack.js";
import { startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";
import { TEST_PG_URL, dropSchemas, needsPostgres, uniqueSchema } from "../support/postgres.js";

const postgres = await needsPostgres();

const SECRET = "fake-signing-secret-cluster";
const alice = { id: "U0ALICE", username: "alice" };

interface Worker {
  name: string;
  fake: FakeLLM;
  proc: RunningNanobot;
  url: string;
}

let root: string;
let schema: string;
let env: Record<string, string>;
let slack: FakeSlack;
let workers: Worker[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-cluster-hooks-"));
  await mkdir(join(root, "ws"));
  schema = uniqueSchema("hooks");
  env = { HOME: root, NANOBOT_HOME: join(root, "home"), NANOBOT_STORE_URL: `${TEST_PG_URL}?schema=${schema}` };
  slack = await startFakeSlack();
});
afterEach(async () => {
  for (const w of workers) {
    await w.proc.stop();
    await w.fake.close();
  }
  workers = [];
  await slack.close();
  await dropSchemas([schema]);
  await rm(root, { recursive: true, force: true });
});

/** A gateway worker with Slack over HTTP, on the shared home and store. */
async function startWorker(name: string): Promise<Worker> {
  const fake = await startFakeLLM();
  const config = join(root, `${name}.json`);
  await writeFile(
    config,
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-cluster-hooks-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws"), dream: { enabled: false } } },
      gateway: { heartbeat: { enabled: false } },
      channels: { slack: { enabled: true, mode: "http", botToken: SLACK_BOT_TOKEN, signingSecret: SECRET, allowFrom: [alice.id], apiRoot: slack.apiRoot } },
    }),
  );
  const proc = startNanobot(["gateway", "--port", "0", "--logs"], { cwd: root, env: { ...env, NANOBOT_CONFIG: config } });
  const worker: Worker = { name, fake, proc, url: "" };
  workers.push(worker);
  worker.url = (await proc.waitFor(/listening on (http:\/\/\S+)/, 60_000))[1]!;
  return worker;
}

/** Two workers: `leader` started first and leads; `follower` says another worker leads. */
async function cluster(): Promise<{ leader: Worker; follower: Worker }> {
  const leader = await startWorker("a");
  await leader.proc.waitFor(/elected leader/, 30_000);
  const follower = await startWorker("b");
  await follower.proc.waitFor(/another worker leads the cluster/, 30_000);
  return { leader, follower };
}

/** Slack's signed event callback for a direct message from alice, as Slack POSTs it. */
function eventBody(eventId: string, text: string): string {
  const { event } = slack.messageEvent({ user: alice, text });
  return JSON.stringify({ type: "event_callback", team_id: "T0FAKE", api_app_id: "A0FAKE", event_id: eventId, event_time: 1, event });
}

function deliver(worker: Worker, body: string, retry?: number): Promise<Response> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return fetch(`${worker.url}/slack/events`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": timestamp,
      "x-slack-signature": slackSignature(SECRET, timestamp, body),
      ...(retry !== undefined ? { "x-slack-retry-num": String(retry), "x-slack-retry-reason": "http_timeout" } : {}),
    },
    body,
  });
}

/** The bot's messages in alice's DM, as they read now (a streamed reply's last edit). */
function answers(): string[] {
  return slack.messages.filter((m) => !m.deleted && m.channel === slack.dmChannel(alice)).map((m) => m.edits.at(-1) ?? m.text);
}

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; stderr:\n${workers.map((w) => `[${w.name}] ${w.proc.stderr()}`).join("\n")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

postgres.describe("Slack's Events API on every gateway worker", () => {
  it("a follower serves the webhook: it checks the signature, runs the turn and answers once", { timeout: 240_000 }, async () => {
    const { leader, follower } = await cluster();
    leader.fake.enqueue({ text: "from a" });
    follower.fake.enqueue({ text: "from b" });

    // A forged request is refused on the follower as on the leader.
    const body = eventBody("Ev0FOLLOWER", "hello follower");
    const forged = await fetch(`${follower.url}/slack/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)), "x-slack-signature": "v0=00" },
      body,
    });
    expect(forged.status).toBe(401);

    expect((await deliver(follower, body)).status).toBe(200);
    await until(() => answers().includes("from b"), "the follower's answer");
    expect(answers()).toEqual(["from b"]);
    expect(leader.fake.requests).toHaveLength(0);
    expect(follower.fake.requests).toHaveLength(1);

    // The leader dies; the follower takes over the leader's part and keeps serving the webhook.
    leader.proc.child.kill("SIGKILL");
    await follower.proc.waitFor(/elected leader/, 60_000);
    follower.fake.enqueue({ text: "b leads now" });
    expect((await deliver(follower, eventBody("Ev0AFTER", "still there?"))).status).toBe(200);
    await until(() => answers().includes("b leads now"), "the answer after the fail-over");
    expect(answers()).toEqual(["from b", "b leads now"]);
    expect(follower.proc.stderr()).not.toMatch(/failed to start/);
  });

  it("the same event delivered to both workers (Slack's retry) is answered once", { timeout: 240_000 }, async () => {
    const { leader, follower } = await cluster();
    leader.fake.enqueue({ text: "from a" });
    follower.fake.enqueue({ text: "from b" });

    const body = eventBody("Ev0RETRIED", "hello twice");
    const [first, retry] = await Promise.all([deliver(leader, body), deliver(follower, body, 1)]);
    // Both are acknowledged (Slack would retry again otherwise); one of them is dropped.
    expect([first.status, retry.status]).toEqual([200, 200]);
    await until(() => workers.some((w) => /slack event delivered again; dropped/.test(w.proc.stderr())), "one worker to drop the repeat");
    await until(() => answers().length > 0, "the answer");
    expect(leader.fake.requests.length + follower.fake.requests.length).toBe(1);
    expect(answers()).toHaveLength(1);
    expect(["from a", "from b"]).toContain(answers()[0]);

    // Later retries to either worker are dropped too; a new event is still answered.
    const dropped = (): number => workers.reduce((n, w) => n + (w.proc.stderr().match(/slack event delivered again; dropped/g)?.length ?? 0), 0);
    expect((await deliver(follower, body, 2)).status).toBe(200);
    expect((await deliver(leader, body, 3)).status).toBe(200);
    await until(() => dropped() === 3, "both workers to drop the later retries");
    leader.fake.enqueue({ text: "next from a" });
    follower.fake.enqueue({ text: "next from b" });
    expect((await deliver(follower, eventBody("Ev0NEXT", "and now"))).status).toBe(200);
    await until(() => answers().length === 2, "the answer to the next event");
    expect(answers()[1]).toMatch(/^(from b|next from b)$/);
    expect(leader.fake.requests.length + follower.fake.requests.length).toBe(2);
  });
});
