/**
 * `nanobot onboard`: writes `$NANOBOT_HOME/config.json` and creates the workspace with its
 * templates. Interactive (@clack/prompts) on a terminal, or non-interactive with
 * `--provider/--api-key/--model --yes`; `--yes` alone writes the Python nanobot's default config
 * and says which key to fill in.
 * An existing config is never replaced without a yes to a question, or `--force`.
 */
import type * as ClackPrompts from "@clack/prompts";
import { access, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";

/** @clack/prompts, loaded by the command itself so other commands start without it. */
type Prompts = typeof ClackPrompts;
import { FALLBACK_MODELS } from "../../agent/default-models.js";
import { defaultWorkspace, nanobotHome } from "../../config/paths.js";
import { ensureWorkspace } from "../../memory/workspace.js";
import { findProviderSpec } from "../../providers/provider-catalog.js";
import type { CliContext } from "../context.js";

interface OnboardOptions {
  provider?: string;
  apiKey?: string;
  apiBase?: string;
  model?: string;
  yes?: boolean;
  force?: boolean;
}

/** Providers onboarding knows; `custom` and `ollama` need an API base instead of (or with) a key. */
export const ONBOARD_PROVIDERS = ["openai", "anthropic", "openrouter", "deepseek", "groq", "gemini", "mistral", "ollama", "custom"] as const;
const DEFAULT_BASES: Record<string, string> = { ollama: "http://127.0.0.1:11434/v1" };
const KEYLESS = new Set(["ollama", "custom"]);

export interface OnboardAnswers {
  provider: string;
  apiKey?: string;
  apiBase?: string;
  model: string;
}

/** The Python nanobot's default model, which `onboard --yes` without a provider writes. */
export const PYTHON_DEFAULT_MODEL = "anthropic/claude-opus-4-5";

/**
 * `onboard --yes` with no provider: the Python nanobot's default shape — its default model and
 * generation settings, an empty key slot for that model's provider, the workspace and the
 * gateway — unless a provider key is already in the environment, which then picks the provider.
 * Returns the config and the one thing left to do.
 */
export function defaultOnboardConfig(workspace: string, env: Record<string, string | undefined>, file: string): { config: Record<string, unknown>; next: string } {
  const fromEnv = ONBOARD_PROVIDERS.find((p) => {
    const keyVar = findProviderSpec(p)?.apiKeyEnv;
    return !KEYLESS.has(p) && keyVar !== undefined && Boolean(env[keyVar]) && FALLBACK_MODELS[p] !== undefined;
  });
  const provider = fromEnv ?? "anthropic";
  const model = fromEnv ? `${fromEnv}/${FALLBACK_MODELS[fromEnv] ?? ""}` : PYTHON_DEFAULT_MODEL;
  const keyVar = findProviderSpec(provider)?.apiKeyEnv ?? "the API key variable";
  const config = {
    providers: { [provider]: fromEnv ? {} : { apiKey: "" } },
    agents: {
      defaults: { workspace, model, provider: "auto", maxTokens: 8192, contextWindowTokens: 200_000, temperature: 0.1, maxToolIterations: 200 },
    },
    gateway: { host: "127.0.0.1", port: 18790 },
  };
  const next = fromEnv
    ? `next: the ${provider} key comes from ${keyVar}; try nanobot agent -m "hello"`
    : `next: put your ${provider} API key in providers.${provider}.apiKey in ${file} (or set ${keyVar}), then nanobot agent -m "hello"; ` +
      "for another provider run nanobot onboard --provider <name> --api-key <key> --force";
  return { config, next };
}

/** The config file onboarding writes: the provider, the default model and the workspace. */
export function onboardConfig(answers: OnboardAnswers, workspace: string): Record<string, unknown> {
  const provider: Record<string, string> = {};
  if (answers.apiKey) provider.apiKey = answers.apiKey;
  const base = answers.apiBase ?? DEFAULT_BASES[answers.provider];
  if (base) provider.apiBase = base;
  const model = answers.model.startsWith(`${answers.provider}/`) ? answers.model : `${answers.provider}/${answers.model}`;
  return {
    providers: { [answers.provider]: provider },
    agents: { defaults: { model, workspace } },
    gateway: { host: "127.0.0.1", port: 18790 },
  };
}

const exists = (path: string): Promise<boolean> => access(path).then(() => true, () => false);

class Cancelled extends Error {}
/** A prompt's value, or the cancellation (Ctrl-C / Esc) as an exception. */
function answer<T>(clack: Prompts, value: T | symbol): Exclude<T, symbol> {
  if (clack.isCancel(value) || typeof value === "symbol") throw new Cancelled("onboarding cancelled");
  return value as Exclude<T, symbol>;
}

async function askInteractively(clack: Prompts, opts: OnboardOptions): Promise<OnboardAnswers> {
  const provider =
    opts.provider ??
    answer(clack, await clack.select({ message: "Which LLM provider?", options: ONBOARD_PROVIDERS.map((p) => ({ value: p as string, label: p })) }));
  const apiBase =
    opts.apiBase ??
    (provider === "custom" ? answer(clack, await clack.text({ message: "API base URL (OpenAI-compatible)", placeholder: "http://127.0.0.1:8000/v1" })) : undefined);
  const apiKey =
    opts.apiKey ??
    (KEYLESS.has(provider) ? undefined : answer(clack, await clack.password({ message: `${provider} API key`, validate: (v) => (v ? undefined : "required") })));
  const model =
    opts.model ?? answer(clack, await clack.text({ message: "Default model", initialValue: FALLBACK_MODELS[provider] ?? "", validate: (v) => (v ? undefined : "required") }));
  return { provider, apiKey: apiKey || undefined, apiBase: apiBase || undefined, model };
}

/** `undefined`: no provider named, so the default config is written (see defaultOnboardConfig). */
function fromFlags(opts: OnboardOptions): OnboardAnswers | string | undefined {
  if (!opts.provider) {
    if (opts.apiKey || opts.apiBase || opts.model) return "--provider is required with --api-key, --api-base or --model";
    return undefined;
  }
  if (!(ONBOARD_PROVIDERS as readonly string[]).includes(opts.provider)) return `unknown provider "${opts.provider}"; known: ${ONBOARD_PROVIDERS.join(", ")}`;
  if (!KEYLESS.has(opts.provider) && !opts.apiKey) return `--api-key is required for ${opts.provider}`;
  if (opts.provider === "custom" && !opts.apiBase) return "--api-base is required for the custom provider";
  const model = opts.model ?? FALLBACK_MODELS[opts.provider];
  if (!model) return "--model is required for this provider";
  return { provider: opts.provider, apiKey: opts.apiKey, apiBase: opts.apiBase, model };
}

export function registerOnboardCommand(program: Command, ctx: CliContext): void {
  program
    .command("onboard")
    .description("create the config and workspace (interactive, or with flags)")
    .option("--provider <name>", `LLM provider (${ONBOARD_PROVIDERS.join(", ")})`)
    .option("--api-key <key>", "the provider's API key")
    .option("--api-base <url>", "API base URL (custom / self-hosted providers)")
    .option("--model <model>", "default model (e.g. gpt-4.1-mini)")
    .option("-y, --yes", "no questions: use the flags, or write the default config without --provider (never replaces an existing config)")
    .option("--force", "replace an existing config")
    .action(async (opts: OnboardOptions) => {
      const { io } = ctx;
      const clack = await import("@clack/prompts");
      const home = nanobotHome(io.env, io.cwd);
      const file = join(home, "config.json");
      const interactive = !opts.yes && io.stdout.isTTY === true && process.stdin.isTTY === true;
      const existing = await exists(file);
      try {
        if (existing && !opts.force) {
          if (!interactive) {
            io.stderr.write(`error: ${file} already exists; nothing changed (use --force to replace it)\n`);
            // A usage error (CONTRACT.md): the command needs --force here.
            ctx.exitCode = 2;
            return;
          }
          if (!answer(clack, await clack.confirm({ message: `${file} exists. Replace it?`, initialValue: false }))) {
            io.stdout.write("kept the existing config\n");
            return;
          }
        }
        if (interactive) clack.intro("nanobot onboard");
        const answers = interactive ? await askInteractively(clack, opts) : fromFlags(opts);
        if (typeof answers === "string") {
          io.stderr.write(`error: ${answers}\n`);
          ctx.exitCode = 2;
          return;
        }
        const workspace = defaultWorkspace(home);
        await mkdir(workspace, { recursive: true });
        const written = answers ? { config: onboardConfig(answers, workspace), next: 'next: nanobot agent -m "hello"  ·  nanobot gateway' } : defaultOnboardConfig(workspace, io.env, file);
        await writeFile(file, `${JSON.stringify(written.config, null, 2)}\n`, { mode: 0o600 });
        // The workspace templates (AGENTS.md, SOUL.md, USER.md, TOOLS.md, HEARTBEAT.md, memory/), as Python's onboard writes them.
        const created = ensureWorkspace(workspace);
        const done = `wrote ${file}\nworkspace ${workspace}${created.length > 0 ? ` (${created.length} template files)` : ""}\n${written.next}`;
        if (interactive) clack.outro(done);
        else io.stdout.write(`${done}\n`);
      } catch (err) {
        if (!(err instanceof Cancelled)) throw err;
        clack.cancel("cancelled; nothing written");
        ctx.exitCode = 1;
      }
    });
}
