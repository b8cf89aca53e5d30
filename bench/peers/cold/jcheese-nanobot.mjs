// Cold start of the TS nanobot port: import, build its AgentLoop, one processDirect turn.
// Run with HOME set to a temp dir: the port keeps sessions under ~/.nanobot.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AgentLoop, MessageBus, OpenAIProvider } from "@jcheesepkg/nanobot";

console.log = () => undefined;
const workspace = join(process.env.HOME ?? ".", "workspace");
mkdirSync(workspace, { recursive: true });
const provider = new OpenAIProvider({ apiKey: "bench", apiBase: process.argv[2], defaultModel: "bench-chat" });
const loop = new AgentLoop({ bus: new MessageBus(), provider, workspace, model: "bench-chat" });
process.stdout.write(`${await loop.processDirect("hi", "cli:bench")}\n`);
