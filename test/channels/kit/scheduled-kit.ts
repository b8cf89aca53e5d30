/**
 * The channel kit's scheduled deliveries: a cron job's answer and a heartbeat report reach the
 * user's chat on the platform. A real AgentLoop (scripted fake LLM) runs on the channel's bus,
 * with the real CronService and system jobs on a manual clock.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCronRunner, installSystemJobs } from "../../../src/agent/cron-bridge.js";
import { CronService } from "../../../src/cron/cron-service.js";
import { cronJobsPath } from "../../../src/cron/cron-store.js";
import { createHarness } from "../../agent/helpers.js";
import type { LoopHarness } from "../../agent/helpers.js";
import { FakeClock } from "../../cron/fake-clock.js";
import { waitFor } from "../helpers/harness.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

const T0 = Date.UTC(2026, 0, 15, 8, 0, 0);
const MINUTE = 60_000;

export function runScheduledKit(platform: KitPlatform): void {
  const { alice } = platform.users;
  let session: KitSession | undefined;
  let harness: LoopHarness | undefined;
  let cron: CronService | undefined;

  afterEach(async () => {
    cron?.stop();
    await harness?.close();
    await session?.close();
    cron = undefined;
    harness = undefined;
    session = undefined;
  });

  describe(`${platform.channel} kit: cron and heartbeat`, () => {
    it("delivers a heartbeat report and a cron job's answer to the user's chat", async () => {
      const s = (session = await platform.start({ allowFrom: [alice.id], streaming: false }));
      const h = (harness = await createHarness({ bus: s.bus }));
      const clock = new FakeClock(T0);
      cron = new CronService({ path: cronJobsPath(h.home), clock, run: createCronRunner({ loop: h.loop, bus: h.bus }) });
      h.loop.useCron(cron);
      installSystemJobs(cron, h.runtime.config);
      cron.start();
      const dm = s.dmChat(alice);
      const texts = (): string[] => s.sent().filter((m) => m.chatId === dm).map((m) => m.text);

      // Alice talks to the bot first: her chat becomes the one heartbeat reports go to.
      h.fake.enqueue({ text: "Hi Alice." });
      await s.userSays(alice, "hello", { chat: "dm" });
      await waitFor(() => texts().includes("Hi Alice."), "the answer to alice", 10_000);

      // Heartbeat (every 30 minutes): the tasks run, the evaluator says NOTIFY, the report goes out.
      await writeFile(join(h.workspace, "HEARTBEAT.md"), "# Heartbeat\n\n- check whether the build is green\n");
      h.fake.enqueue({ text: "The build is red since 10:02." }, { text: "NOTIFY" });
      clock.advance(30 * MINUTE);
      await cron.idle();
      await waitFor(() => texts().includes("The build is red since 10:02."), "the heartbeat report", 10_000);

      // A job the user scheduled for this chat (due before the next heartbeat).
      cron.add({ name: "water", message: "Remind me to drink water.", schedule: { kind: "every", everyMs: 20 * MINUTE }, sessionKey: `${platform.channel}:${dm}`, channel: platform.channel, chatId: dm });
      h.fake.enqueue({ text: "Time to drink some water!" });
      clock.advance(20 * MINUTE);
      await cron.idle();
      await waitFor(() => texts().includes("Time to drink some water!"), "the cron job's answer", 10_000);

      expect(texts()).toEqual(["Hi Alice.", "The build is red since 10:02.", "Time to drink some water!"]);
      h.fake.assertDone();
    }, 30_000);
  });
}
