/**
 * The gateway with the AgentLoop as its turn processor (per-session lanes, the default global
 * gate of 3 turns), for the gateway bench; the CLI's `nanobot gateway` is measured as shipped
 * beside it. Config comes from `NANOBOT_CONFIG`; prints `{"port":N}` once listening.
 */
import { AgentLoop } from "../src/agent/agent-loop.js";
import { Runtime } from "../src/agent/runtime.js";
import { loadConfig } from "../src/config/load.js";
import { startRuntimeGateway } from "../src/gateway/runtime-gateway.js";

const loaded = await loadConfig({ env: process.env, cwd: process.cwd() });
const runtime = new Runtime({ config: loaded.config, home: loaded.home, env: process.env, connectMcp: false });
const loop = new AgentLoop({ runtime });
const running = await startRuntimeGateway(runtime, { host: "127.0.0.1", port: 0, processor: loop });
process.stdout.write(`${JSON.stringify({ port: Number(new URL(running.server.url).port) })}\n`);
const stop = (): void => {
  loop
    .stop()
    .then(() => running.close())
    .finally(() => process.exit(0))
    .catch(() => process.exit(1));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
