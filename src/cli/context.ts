/**
 * What every command gets: the injected io, colours, and a lazy config loader that honours the
 * global `--config` option. Commands set `exitCode` instead of calling process.exit.
 */
import type { Command } from "commander";
import { loadConfig } from "../config/load.js";
import { scrubSecretText } from "../core/scrub.js";
import type { LoadedConfig } from "../config/load.js";
import { colorsFor } from "./io.js";
import type { CliIo, Colors } from "./io.js";

export interface CliContext {
  io: CliIo;
  version: string;
  /** Colours for stdout and stderr respectively. */
  colors: { out: Colors; err: Colors };
  /** Loads the configuration named by the global `--config` (or found by lookup). */
  loadConfig(command: Command): Promise<LoadedConfig>;
  /** Prints config warnings to stderr, one per line. */
  printWarnings(warnings: readonly string[]): void;
  /** The process exit code once the command returns (0 unless a command sets it). */
  exitCode: number;
}

export function createContext(io: CliIo, version: string): CliContext {
  const colors = { out: colorsFor(io.stdout, io.env), err: colorsFor(io.stderr, io.env) };
  return {
    io,
    version,
    colors,
    exitCode: 0,
    loadConfig(command) {
      const opts = command.optsWithGlobals<{ config?: string }>();
      return loadConfig({ configPath: opts.config, env: io.env, cwd: io.cwd });
    },
    printWarnings(warnings) {
      for (const w of warnings) io.stderr.write(`${colors.err.yellow("warning:")} ${scrubSecretText(w)}\n`);
    },
  };
}
