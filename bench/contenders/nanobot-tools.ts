/** The benchmark's two tools in nanobot's Tool contract (the peers' adapters build the same). */
import type { Tool } from "../../src/tools/tool.js";
import { SLOW_TOOL_MS, sleep } from "./types.js";

export const lookupTool: Tool = {
  name: "lookup",
  description: "Looks a key up in the benchmark table.",
  parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  readOnly: true,
  execute: async (args) => `value of ${String(args.key)}`,
};

export const slowReadTool: Tool = {
  name: "slow_read",
  description: "Reads a file slowly (200 ms).",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  readOnly: true,
  execute: async (args) => {
    await sleep(SLOW_TOOL_MS);
    return `contents of ${String(args.path)}`;
  },
};

/** 20 KB of text per call (the `bench-heavy` script's tool): what a file read or a web page returns. */
export const BIG_RESULT_CHARS = 20_000;
const BIG_LINE = "The deployment notes list every service, its owner, its rollback plan and its alerts. ";

export const bigReadTool: Tool = {
  name: "big_read",
  description: "Reads a large file (20 KB).",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  readOnly: true,
  execute: async (args) => `${String(args.path)}: ${BIG_LINE.repeat(Math.ceil(BIG_RESULT_CHARS / BIG_LINE.length))}`.slice(0, BIG_RESULT_CHARS),
};
