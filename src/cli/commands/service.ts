/**
 * `nanobot service install|uninstall|status`: the gateway as a background service of the user —
 * a systemd user unit on Linux (`~/.config/systemd/user/nanobot-gateway.service`), a launchd
 * agent on macOS (`~/Library/LaunchAgents/ai.nanobot.gateway.plist`). `install` writes it and,
 * where the service manager answers, enables and starts it; otherwise it prints the commands to
 * run. A service does not see the shell's environment: keys it needs go in `<home>/service.env`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { userHome } from "../../config/paths.js";
import type { Env } from "../../config/interpolate.js";
import type { CliContext } from "../context.js";

export const SYSTEMD_UNIT = "nanobot-gateway.service";
export const LAUNCHD_LABEL = "ai.nanobot.gateway";

type Platform = "linux" | "darwin";

export interface ServiceSpec {
  platform: Platform;
  /** Where the unit / plist is written. */
  file: string;
  node: string;
  bin: string;
  home: string;
  configPath?: string;
  envFile: string;
}

/** The launcher of this installation: bin/nanobot.js in the first folder above this module that has one (src/, dist/ and the bundle sit at different depths). */
function launcherPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, "bin", "nanobot.js")) && existsSync(join(dir, "package.json"))) return join(dir, "bin", "nanobot.js");
    dir = dirname(dir);
  }
  return resolve(process.argv[1] ?? "nanobot");
}

export function serviceSpec(platform: Platform, env: Env, home: string, configPath: string | undefined): ServiceSpec {
  const file =
    platform === "linux"
      ? join(env.XDG_CONFIG_HOME || join(userHome(env), ".config"), "systemd", "user", SYSTEMD_UNIT)
      : join(userHome(env), "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
  return {
    platform,
    file,
    node: process.execPath,
    bin: launcherPath(),
    home,
    ...(configPath ? { configPath: resolve(configPath) } : {}),
    envFile: join(home, "service.env"),
  };
}

/** systemd quoting for one ExecStart word. */
const systemdWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `"${word.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`);

function gatewayArgs(spec: ServiceSpec): string[] {
  return [spec.node, spec.bin, ...(spec.configPath ? ["--config", spec.configPath] : []), "gateway"];
}

export function systemdUnit(spec: ServiceSpec): string {
  return `# Written by \`nanobot service install\`; \`nanobot service uninstall\` removes it.
[Unit]
Description=nanobot gateway (web UI, OpenAI-compatible API, channels, cron)
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
ExecStart=${gatewayArgs(spec).map(systemdWord).join(" ")}
WorkingDirectory=${spec.home}
Environment=NANOBOT_HOME=${spec.home}
# Provider keys and other variables the config uses (KEY=value lines); optional.
EnvironmentFile=-${spec.envFile}
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`;
}

const xml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function launchdPlist(spec: ServiceSpec): string {
  const args = gatewayArgs(spec).map((a) => `    <string>${xml(a)}</string>`).join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by \`nanobot service install\`; \`nanobot service uninstall\` removes it. Variables the
     config needs (provider keys) go under EnvironmentVariables. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
${args}
  </array>
  <key>WorkingDirectory</key>
  <string>${xml(spec.home)}</string>
  <key>EnvironmentVariables</key>
  <dict>
    <key>NANOBOT_HOME</key>
    <string>${xml(spec.home)}</string>
  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>StandardErrorPath</key>
  <string>${xml(join(spec.home, "logs", "service.err.log"))}</string>
</dict>
</plist>
`;
}

interface Ran {
  ok: boolean;
  output: string;
}

/** Runs a service-manager command line with the command's environment; never throws. */
function run([cmd, ...args]: readonly string[], env: Env): Promise<Ran> {
  return new Promise((done) => {
    execFile(cmd!, args, { env: env as NodeJS.ProcessEnv, timeout: 15_000 }, (err, stdout, stderr) => {
      done({ ok: !err, output: `${stdout}${stderr}`.trim() || (err ? err.message : "") });
    });
  });
}

/** The commands that load, start, stop and inspect the service on each platform. */
function managerCommands(spec: ServiceSpec): { probe: string[]; reload: string[]; start: string[]; stop: string[]; active: string[] } {
  if (spec.platform === "linux") {
    return {
      probe: ["systemctl", "--user", "show-environment"],
      reload: ["systemctl", "--user", "daemon-reload"],
      start: ["systemctl", "--user", "enable", "--now", SYSTEMD_UNIT],
      stop: ["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT],
      active: ["systemctl", "--user", "is-active", SYSTEMD_UNIT],
    };
  }
  return {
    probe: ["launchctl", "version"],
    reload: ["true"],
    start: ["launchctl", "load", "-w", spec.file],
    stop: ["launchctl", "unload", "-w", spec.file],
    active: ["launchctl", "list", LAUNCHD_LABEL],
  };
}

function parsePlatform(value: string): Platform {
  if (value !== "linux" && value !== "darwin") throw new InvalidArgumentError("expected linux or darwin");
  return value;
}

const thisPlatform = (): Platform => (process.platform === "darwin" ? "darwin" : "linux");

interface ServiceOptions {
  json?: boolean;
  start?: boolean;
  force?: boolean;
  platform?: Platform;
}

export function registerServiceCommand(program: Command, ctx: CliContext): void {
  const service = program.command("service").description("run the gateway as a user service (systemd on Linux, launchd on macOS)");
  const out = (opts: ServiceOptions, report: Record<string, unknown>, lines: string[]): void => {
    ctx.io.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : lines.map((l) => `${l}\n`).join(""));
  };
  const specFor = async (cmd: Command, opts: ServiceOptions): Promise<ServiceSpec> => {
    const loaded = await ctx.loadConfig(cmd);
    return serviceSpec(opts.platform ?? thisPlatform(), ctx.io.env, loaded.home, loaded.path);
  };
  const withCommon = (c: Command): Command =>
    c.option("--json", "print one JSON object").option("--platform <name>", "linux (systemd) or darwin (launchd); default: this machine's", parsePlatform);

  withCommon(service.command("install").description("write the service file and start the gateway with it"))
    .option("--no-start", "write the file only; do not enable or start it")
    .option("--force", "replace a service file that differs")
    .action(async (opts: ServiceOptions, cmd: Command) => {
      const spec = await specFor(cmd, opts);
      const content = spec.platform === "linux" ? systemdUnit(spec) : launchdPlist(spec);
      const existing = existsSync(spec.file) ? await readFile(spec.file, "utf8") : undefined;
      if (existing !== undefined && existing !== content && !opts.force) {
        ctx.io.stderr.write(`${ctx.colors.err.red("error:")} ${spec.file} exists and differs (use --force to replace it)\n`);
        ctx.exitCode = 2;
        return;
      }
      await mkdir(dirname(spec.file), { recursive: true });
      await writeFile(spec.file, content);
      const m = managerCommands(spec);
      const lines = [`wrote ${spec.file}`];
      let started = false;
      let manager: string | undefined;
      if (opts.start !== false) {
        const probe = await run(m.probe, ctx.io.env);
        if (probe.ok) {
          await run(m.reload, ctx.io.env);
          const start = await run(m.start, ctx.io.env);
          started = start.ok;
          if (!start.ok) manager = start.output;
          lines.push(start.ok ? `started: ${m.start.join(" ")}` : `could not start it (${start.output}); run: ${m.start.join(" ")}`);
        } else {
          manager = probe.output;
          lines.push(`the service manager did not answer (${probe.output.split("\n")[0]}); start it with: ${m.reload.join(" ")} && ${m.start.join(" ")}`);
        }
      } else lines.push(`start it with: ${m.reload.join(" ")} && ${m.start.join(" ")}`);
      if (spec.platform === "linux") {
        lines.push(`provider keys and other variables the config reads go in ${spec.envFile} (KEY=value lines): a service does not see your shell's environment`);
        lines.push("to keep it running after you log out: loginctl enable-linger \"$USER\"");
      }
      lines.push("logs: nanobot logs -f");
      out(opts, { file: spec.file, platform: spec.platform, started, ...(manager ? { manager } : {}), envFile: spec.envFile }, lines);
      if (opts.start !== false && !started) ctx.exitCode = 1;
    });

  withCommon(service.command("uninstall").description("stop the service and remove its file")).action(async (opts: ServiceOptions, cmd: Command) => {
    const spec = await specFor(cmd, opts);
    if (!existsSync(spec.file)) {
      out(opts, { file: spec.file, removed: false }, [`no service installed (${spec.file} does not exist)`]);
      return;
    }
    const m = managerCommands(spec);
    const stopped = (await run(m.probe, ctx.io.env)).ok && (await run(m.stop, ctx.io.env)).ok;
    await rm(spec.file, { force: true });
    if (stopped) await run(m.reload, ctx.io.env);
    out(opts, { file: spec.file, removed: true, stopped }, [`removed ${spec.file}`, ...(stopped ? ["stopped and disabled"] : [`if it is still running: ${m.stop.join(" ")}`])]);
  });

  withCommon(service.command("status").description("whether the service is installed and running")).action(async (opts: ServiceOptions, cmd: Command) => {
    const spec = await specFor(cmd, opts);
    const installed = existsSync(spec.file);
    const m = managerCommands(spec);
    const active = installed ? await run(m.active, ctx.io.env) : { ok: false, output: "" };
    const state = !installed ? "not installed" : active.ok ? "running" : `installed, not running${active.output ? ` (${active.output.split("\n")[0]})` : ""}`;
    out(opts, { file: spec.file, platform: spec.platform, installed, running: installed && active.ok }, [`${spec.file}: ${state}`]);
    if (!installed || !active.ok) ctx.exitCode = 1;
  });
}
