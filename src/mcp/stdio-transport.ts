/**
 * Our stdio client transport: spawns the server and speaks newline-delimited JSON-RPC, like the
 * SDK's `StdioClientTransport`, except for one thing. The SDK's reader drops the whole
 * connection when one message passes its 10 MiB buffer, so a single huge tool result killed
 * the server process. Here such a line is skipped without buffering it, and when it is the
 * reply to a request we sent, that request gets an error response naming the size and the
 * limit — the call fails, the connection stays up.
 */
import { spawn } from "node:child_process";
import type { ChildProcess, IOType } from "node:child_process";
import { PassThrough } from "node:stream";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { BoundedLineReader } from "./line-reader.js";
import type { OversizedLine } from "./line-reader.js";

/** The largest message accepted from a stdio server (the SDK's own default). */
export const MAX_STDIO_MESSAGE_BYTES = 10 * 1024 * 1024;

/** How long `close()` waits after closing stdin, and again after SIGTERM. */
const EXIT_GRACE_MS = 2_000;

export interface StdioServerParams {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  maxMessageBytes?: number;
}

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"jsonrpc":"2.0","id":7,…` (id first) and `…,"id":7}` (id last, as the TypeScript SDK writes replies). */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`);
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);

function idsIn(line: OversizedLine): RequestId[] {
  const found = [ID_AT_START.exec(line.head)?.[1], ID_AT_END.exec(line.tail)?.[1]];
  return found.filter((raw): raw is string => raw !== undefined).map((raw) => JSON.parse(raw) as RequestId);
}

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export class BoundedStdioClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly stderrStream = new PassThrough();
  private readonly reader: BoundedLineReader;
  private readonly maxBytes: number;
  /** Ids of our requests still waiting for a reply, so an oversized reply can be pinned on one. */
  private readonly waiting = new Set<RequestId>();

  constructor(private readonly params: StdioServerParams) {
    this.maxBytes = params.maxMessageBytes ?? MAX_STDIO_MESSAGE_BYTES;
    this.reader = new BoundedLineReader(this.maxBytes, {
      line: (text) => this.receive(text),
      oversized: (info) => this.receiveOversized(info),
    });
  }

  /** The server's stderr, available before `start()` so no early output is lost. */
  get stderr(): PassThrough {
    return this.stderrStream;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("BoundedStdioClientTransport already started");
    return new Promise((resolve, reject) => {
      const stdio: IOType[] = ["pipe", "pipe", "pipe"];
      const child = spawn(this.params.command, this.params.args ?? [], {
        env: { ...getDefaultEnvironment(), ...this.params.env },
        cwd: this.params.cwd,
        stdio,
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      child.on("error", (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.on("spawn", () => resolve());
      child.on("close", () => {
        if (this.child === child) this.child = undefined;
        this.waiting.clear();
        this.onclose?.();
      });
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("data", (chunk: Buffer) => this.reader.push(chunk));
      child.stderr?.pipe(this.stderrStream);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin) return reject(new Error("Not connected"));
      if ("method" in message && "id" in message) this.waiting.add(message.id);
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.reader.clear();
    if (!child) return;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("close", () => resolve());
    });
    const waitExit = (): Promise<void> => Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, EXIT_GRACE_MS).unref())]);
    child.stdin?.end();
    await waitExit();
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      child.kill(signal);
      if (signal === "SIGTERM") await waitExit();
    }
  }

  private receive(text: string): void {
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    if (("result" in message || "error" in message) && "id" in message && message.id !== undefined) this.waiting.delete(message.id);
    this.onmessage?.(message);
  }

  /** Fails the request the oversized line answered; anything else is reported and skipped. */
  private receiveOversized(info: OversizedLine): void {
    const id = idsIn(info).find((candidate) => this.waiting.has(candidate));
    const what = `a ${megabytes(info.bytes)} message, over the ${megabytes(this.maxBytes)} limit for one stdio message`;
    if (id === undefined) {
      this.onerror?.(new Error(`MCP server sent ${what}; it was skipped`));
      return;
    }
    this.waiting.delete(id);
    this.onmessage?.({
      jsonrpc: "2.0",
      id,
      error: {
        code: ErrorCode.InternalError,
        message: `The server's reply was ${what}, so it was dropped; ask for less (a smaller range, page or file).`,
      },
    });
  }
}
