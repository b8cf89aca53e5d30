/**
 * Re-draws the chart of a saved run: `npx tsx bench/render-svg.ts bench/results/<date>.json`
 * writes `<date>.svg` beside it (the runner does this itself at the end of each run).
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { ColdStartResult } from "./cold-start.js";
import type { Figure } from "./peers-bench.js";
import { coldStartFigure, renderSvg } from "./svg-chart.js";

interface SavedRun {
  quick: boolean;
  machine: { cpus: number; cpuModel: string; node: string };
  results: { peers?: { figures: Figure[]; coldStart?: ColdStartResult } };
}

const file = process.argv[2];
if (!file?.endsWith(".json")) throw new Error("usage: npx tsx bench/render-svg.ts bench/results/<date>.json");
const saved = JSON.parse(readFileSync(file, "utf8")) as SavedRun;
const peers = saved.results.peers;
if (!peers) throw new Error(`${file} has no peers results`);
const m = saved.machine;
const title = `nanobot vs TypeScript peers${saved.quick ? " (quick)" : ""} — ${m.cpus} × ${m.cpuModel}, Node ${m.node}`;
writeFileSync(file.replace(/\.json$/, ".svg"), renderSvg(title, [...peers.figures, ...(peers.coldStart ? [coldStartFigure(peers.coldStart)] : [])]));
process.stdout.write(`wrote ${file.replace(/\.json$/, ".svg")}\n`);
