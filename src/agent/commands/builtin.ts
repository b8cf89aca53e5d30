/**
 * The built-in slash commands. Each answers with text; none reaches the LLM except `/dream`,
 * which runs the memory keeper on purpose.
 */
import { mcpCommand } from "./mcp-command.js";
import { textOf } from "../../core/message-helpers.js";
import { findPreset, presetNames } from "../../config/model-presets.js";
import { MAX_GOAL_ROUNDS, newGoal, readGoal, setGoal } from "../goals.js";
import { CommandRegistry } from "./registry.js";
import type { CommandInvocation, SlashCommand } from "./registry.js";

const HISTORY_DEFAULT = 10;
const HISTORY_MAX = 100;
const HISTORY_LINE_CHARS = 300;

const help: SlashCommand = {
  name: "help",
  description: "List the commands",
  async run({ host }) {
    return `Commands:\n${host.commands.helpLines().join("\n")}`;
  },
};

const newThread: SlashCommand = {
  name: "new",
  description: "Start a new conversation (the current one is archived)",
  async run({ host, sessionKey }) {
    await host.runtime.store().newThread(sessionKey);
    return "Started a new conversation. The previous one is archived.";
  },
};

const stop: SlashCommand = {
  name: "stop",
  description: "Stop the running task, its sub-agents and queued messages",
  priority: true,
  async run({ host, sessionKey }) {
    const stopped = host.stopSession(sessionKey);
    // A stopped goal stays stopped: the next answer must not resume it.
    const store = host.runtime.store();
    const current = readGoal((await store.getSession(sessionKey))?.metadata);
    if (current?.status === "active") await setGoal(store, sessionKey, { ...current, status: "abandoned", note: "stopped by the user" });
    return `Stopped ${stopped} task(s).`;
  },
};

const status: SlashCommand = {
  name: "status",
  description: "Model, token usage, context size, messages and uptime",
  priority: true,
  async run({ host, sessionKey, request }) {
    return host.statusText(sessionKey, request.agent);
  },
};

const restart: SlashCommand = {
  name: "restart",
  description: "Restart nanobot",
  priority: true,
  async run({ host }) {
    return host.restart();
  },
};

const model: SlashCommand = {
  name: "model",
  usage: "/model [preset]",
  description: "Show the model, or switch this session to a model preset (`default` = agents.defaults; `reset` follows the config again)",
  async run({ host, sessionKey, args, request }) {
    const config = host.runtime.config;
    const available = presetNames(config).join(", ");
    const store = host.runtime.store();
    const session = await store.getSession(sessionKey);
    const current = typeof session?.metadata.modelPreset === "string" ? session.metadata.modelPreset : undefined;
    if (!args) {
      const agent = request.agent ? config.agents.named[request.agent] : undefined;
      if (current && !findPreset(config, current)) {
        const fallback = host.runtime.selectionFor(agent);
        return [`Model: ${fallback.modelRef}`, `Preset: ${current} was removed from modelPresets; this session follows the configured model`, `Presets: ${available}`].join("\n");
      }
      const selection = host.runtime.selectionFor(agent, current);
      const preset = current ?? (agent?.model ? undefined : selection.preset);
      return [`Model: ${selection.modelRef}`, ...(preset ? [`Preset: ${preset}${current ? " (this session)" : ""}`] : []), `Presets: ${available}`].join("\n");
    }
    if (args === "reset") {
      await store.ensureSession(sessionKey);
      await store.updateMetadata(sessionKey, { modelPreset: undefined });
      return "This session follows the configured model again.";
    }
    const name = findPreset(config, args);
    if (!name) return `Could not switch model preset: "${args}" not found.\nAvailable presets: ${available}`;
    // Resolve before saving, so a preset whose provider is missing is reported, not persisted.
    const selection = host.runtime.selectionFor(undefined, name);
    host.runtime.registry.resolveTarget(selection.modelRef);
    await store.ensureSession(sessionKey);
    await store.updateMetadata(sessionKey, { modelPreset: name });
    return [
      `Switched model preset to ${name} (this session).`,
      `Model: ${selection.modelRef}`,
      `Context window: ${selection.contextWindow}`,
      `Max output tokens: ${selection.maxTokens}`,
      `Temperature: ${selection.temperature}`,
      ...(selection.reasoningEffort ? [`Reasoning effort: ${selection.reasoningEffort}`] : []),
    ].join("\n");
  },
};

const history: SlashCommand = {
  name: "history",
  usage: "/history [n]",
  description: `Show the last n messages of this conversation (default ${HISTORY_DEFAULT})`,
  async run({ host, sessionKey, args }) {
    const n = args ? Number.parseInt(args, 10) : HISTORY_DEFAULT;
    if (!Number.isInteger(n) || n < 1) return "Usage: /history [n] with n a positive number.";
    const messages = (await host.runtime.store().loadMessages(sessionKey)).filter((m) => m.role === "user" || m.role === "assistant");
    const shown = messages.slice(-Math.min(n, HISTORY_MAX));
    if (shown.length === 0) return "No messages yet.";
    const thread = (await host.runtime.store().listThreads(sessionKey)).find((t) => t.current);
    const heading = thread?.name ?? thread?.title;
    return (heading ? `— ${heading} —\n` : "") + shown
      .map((m) => {
        const text = textOf(m).replace(/\s+/g, " ").trim() || "(tool use)";
        return `${m.role === "user" ? "You" : "Assistant"}: ${text.length > HISTORY_LINE_CHARS ? `${text.slice(0, HISTORY_LINE_CHARS)}…` : text}`;
      })
      .join("\n");
  },
};

const skill: SlashCommand = {
  name: "skill",
  usage: "/skill [name]",
  description: "List the skills, or show one (use $name in a message to apply it)",
  async run({ host, args }) {
    const skills = host.skills();
    if (args) {
      const found = skills.find((s) => s.name === args.replace(/^\$/, ""));
      if (!found) return `Unknown skill "${args}". Skills: ${skills.map((s) => s.name).join(", ") || "(none)"}`;
      const state = found.available ? "available" : `unavailable (needs ${found.missing.join(", ")})`;
      return `${found.name} — ${found.description}\n${state}, ${found.source}: ${found.path}`;
    }
    if (skills.length === 0) return "No skills installed.";
    return skills
      .map((s) => `${s.available ? "✓" : "✗"} ${s.name} — ${s.description}${s.available ? "" : ` (unavailable: needs ${s.missing.join(", ")})`}`)
      .join("\n");
  },
};

const dream: SlashCommand = {
  name: "dream",
  description: "Update long-term memory from recent history now",
  async run({ host, signal }: CommandInvocation) {
    const result = await host.runDream(signal);
    if (!result.ran) return "Nothing new to remember.";
    if (result.error) return `Dream failed: ${result.error}`;
    const files = result.edited.length > 0 ? result.edited.join(", ") : "no files changed";
    return `Dream processed ${result.processed} history entr${result.processed === 1 ? "y" : "ies"}: ${files}.`;
  },
};

const goal: SlashCommand = {
  name: "goal",
  usage: "/goal [objective|clear]",
  description: `Keep working on an objective across turns (at most ${MAX_GOAL_ROUNDS} continuation rounds); no argument shows it`,
  async run({ host, sessionKey, args }) {
    const store = host.runtime.store();
    const current = readGoal((await store.getSession(sessionKey))?.metadata);
    if (!args) return current ? `Goal (${current.status}, round ${current.rounds}/${MAX_GOAL_ROUNDS}): ${current.objective}` : "No goal. Set one with /goal <objective>.";
    if (args === "clear" || args === "stop") {
      await setGoal(store, sessionKey, undefined);
      return current ? "Goal cleared." : "No goal to clear.";
    }
    await setGoal(store, sessionKey, newGoal(args));
    return `Goal set: ${args}\nI will keep working on it after each answer until it is done (/goal clear or /stop to end).`;
  },
};

/** A registry with every built-in command. */
export function createBuiltinCommands(): CommandRegistry {
  const registry = new CommandRegistry();
  for (const command of [help, newThread, stop, status, restart, model, history, skill, dream, goal, mcpCommand]) registry.register(command);
  return registry;
}
