/**
 * The CLI's only window to the outside: streams, environment and working directory are
 * injected so tests run commands in-process and read what they printed.
 */
import pc from "picocolors";
import type { Env } from "../config/interpolate.js";

export interface OutputStream {
  write(chunk: string): unknown;
  /** True for a terminal; colours are used only then. */
  isTTY?: boolean;
}

/** Standard input as commands read it (`agent` reads a piped message from it). */
export interface InputStream extends AsyncIterable<unknown> {
  /** True for a terminal. */
  isTTY?: boolean;
}

export interface CliIo {
  /** Absent in tests that run commands in-process (no message is read from it then). */
  stdin?: InputStream;
  stdout: OutputStream;
  stderr: OutputStream;
  env: Env;
  cwd: string;
}

export function processIo(): CliIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}

export type Colors = ReturnType<typeof pc.createColors>;

/** Colours for one stream: plain strings unless it is a TTY (and NO_COLOR is not set). */
export function colorsFor(stream: OutputStream, env: Env): Colors {
  return pc.createColors(stream.isTTY === true && !env.NO_COLOR);
}
