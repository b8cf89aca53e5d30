/**
 * Preloaded into a process under test (`node --import bench/support/profile-on-signal.mjs …`):
 * the first SIGUSR2 starts the V8 sampling profiler, the next one stops it and writes the profile
 * to `$NANOBOT_PROFILE_OUT` (JSON, `.cpuprofile` format). Each step prints a line on stderr
 * (`profile: started`, `profile: written`) so the harness knows when it took effect. Start-up and
 * warm-up stay out of the profile, which `node --cpu-prof` cannot do. With
 * `NANOBOT_PROFILE_KIND=heap` it is the sampling heap profiler instead (`.heapprofile` format:
 * where the sampled allocations were made, collected or not).
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import process from "node:process";

const out = process.env.NANOBOT_PROFILE_OUT;
const heap = process.env.NANOBOT_PROFILE_KIND === "heap";
let session;
if (out) {
  process.on("SIGUSR2", () => {
    void (async () => {
      if (!session) {
        session = new Session();
        session.connect();
        if (heap) {
          // Samples kept even once collected: where the garbage comes from, not what is retained.
          await session.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
        } else {
          await session.post("Profiler.enable");
          await session.post("Profiler.setSamplingInterval", { interval: Number(process.env.NANOBOT_PROFILE_INTERVAL_US ?? 200) });
          await session.post("Profiler.start");
        }
        process.stderr.write("profile: started\n");
        return;
      }
      const { profile } = await session.post(heap ? "HeapProfiler.stopSampling" : "Profiler.stop");
      session.disconnect();
      writeFileSync(out, JSON.stringify(profile));
      process.stderr.write("profile: written\n");
    })();
  });
}
