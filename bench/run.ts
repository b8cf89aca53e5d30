/**
 * `npm run bench [-- --quick]`: runs every benchmark in this folder, prints their tables and
 * writes `bench/results/<date>.json`. Figures are measured, never asserted (see README.md).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatAgentTurnPrepBench, runAgentTurnPrepBench } from "./agent-turn-prep.js";
import { CLUSTER_FULL, CLUSTER_QUICK, formatClusterBench, runClusterBench } from "./cluster-bench.js";
import { FAILOVER_FULL, FAILOVER_QUICK, formatFailoverBench, runFailoverBench } from "./cluster-failover-bench.js";
import { formatEngineOverheadBench, runEngineOverheadBench } from "./engine-overhead.js";
import { GATEWAY_FULL, GATEWAY_QUICK, formatGatewayBench, runGatewayBench } from "./gateway-bench.js";
import { SOAK_FULL, SOAK_QUICK, formatGatewaySoak, runGatewaySoak } from "./gateway-soak.js";
import { LONG_FULL, LONG_QUICK, formatLongSessionBench, runLongSessionBench } from "./long-session.js";
import { FULL, QUICK, formatPeersBench, runPeersBench } from "./peers-bench.js";
import type { ColdStartResult } from "./cold-start.js";
import type { Figure } from "./peers-bench.js";
import { formatSessionBench, runSessionPersistenceBench } from "./session-persistence.js";
import { coldStartFigure, renderSvg } from "./svg-chart.js";

interface BenchEntry {
  name: string;
  run(quick: boolean): Promise<{ data: unknown; table: string }>;
}

const progress = (line: string): void => {
  process.stderr.write(`  … ${line}\n`);
};

const BENCHES: BenchEntry[] = [
  {
    name: "peers",
    run: async (quick) => {
      const data = await runPeersBench(quick ? QUICK : FULL, progress);
      return { data, table: formatPeersBench(data) };
    },
  },
  {
    name: "gateway",
    run: async (quick) => {
      const data = await runGatewayBench(quick ? GATEWAY_QUICK : GATEWAY_FULL, progress);
      return { data, table: formatGatewayBench(data) };
    },
  },
  {
    // Needs the built CLI (`npm run build`).
    name: "gateway-soak",
    run: async (quick) => {
      const data = await runGatewaySoak(quick ? SOAK_QUICK : SOAK_FULL, progress);
      return { data, table: formatGatewaySoak(data) };
    },
  },
  {
    name: "cluster",
    run: async (quick) => {
      const options = quick ? CLUSTER_QUICK : CLUSTER_FULL;
      // `--clients=200` runs only the rows of that many clients.
      const data = await runClusterBench(clientsArg ? { ...options, clients: clientsArg } : options, progress);
      return { data, table: formatClusterBench(data) };
    },
  },
  {
    // Needs the built CLI (`npm run build`) and the local PostgreSQL.
    name: "cluster-failover",
    run: async (quick) => {
      const data = await runFailoverBench(quick ? FAILOVER_QUICK : FAILOVER_FULL, progress);
      return { data, table: formatFailoverBench(data) };
    },
  },
  {
    name: "long-session",
    run: async (quick) => {
      const data = await runLongSessionBench(quick ? LONG_QUICK : LONG_FULL, progress);
      return { data, table: formatLongSessionBench(data) };
    },
  },
  {
    name: "agent-turn-prep",
    run: async (quick) => {
      const data = await runAgentTurnPrepBench(quick ? { lengths: [10_000], reps: 3 } : {});
      return { data, table: formatAgentTurnPrepBench(data) };
    },
  },
  {
    name: "engine-overhead",
    run: async () => {
      const data = await runEngineOverheadBench();
      return { data, table: formatEngineOverheadBench(data) };
    },
  },
  {
    name: "session-persistence",
    run: async (quick) => {
      const data = await runSessionPersistenceBench(quick ? { lengths: [10, 1_000, 10_000] } : {});
      return { data, table: formatSessionBench(data) };
    },
  },
];

interface SavedResults {
  date: string;
  quick: boolean;
  machine: Record<string, unknown>;
  results: Record<string, unknown>;
  /** When each section was measured (sections kept from an earlier `--only` run keep their date). */
  ranAt: Record<string, string>;
}

const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
const clientsArg = process.argv
  .find((a) => a.startsWith("--clients="))
  ?.slice("--clients=".length)
  .split(",")
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown", memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
const results: Record<string, unknown> = {};
process.stdout.write(`nanobot benchmarks${quick ? " (quick)" : ""} — ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}\n\n`);
for (const bench of BENCHES) {
  if (only && bench.name !== only) continue;
  process.stdout.write(`## ${bench.name}\n`);
  const { data, table } = await bench.run(quick);
  process.stdout.write(`${table}\n`);
  results[bench.name] = data;
}
const dir = fileURLToPath(new URL("./results/", import.meta.url));
mkdirSync(dir, { recursive: true });
const stem = join(dir, `${new Date().toISOString().slice(0, 10)}${quick ? "-quick" : ""}`);
const now = new Date().toISOString();
// `--only` replaces its own section of the day's results and keeps the others.
const previous = only && existsSync(`${stem}.json`) ? (JSON.parse(readFileSync(`${stem}.json`, "utf8")) as SavedResults) : undefined;
const saved: SavedResults = {
  date: now,
  quick,
  machine,
  results: { ...previous?.results, ...results },
  ranAt: { ...(previous?.ranAt ?? Object.fromEntries(Object.keys(previous?.results ?? {}).map((name) => [name, previous?.date ?? now]))), ...Object.fromEntries(Object.keys(results).map((name) => [name, now])) },
};
writeFileSync(`${stem}.json`, `${JSON.stringify(saved, null, 2)}\n`);
const peers = results.peers as { figures?: Figure[]; coldStart?: ColdStartResult } | undefined;
if (peers?.figures) {
  const title = `nanobot vs TypeScript peers${quick ? " (quick)" : ""} — ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}`;
  writeFileSync(`${stem}.svg`, renderSvg(title, [...peers.figures, ...(peers.coldStart ? [coldStartFigure(peers.coldStart)] : [])]));
}
process.stdout.write(`results written to ${stem}.json${peers?.figures ? ` and ${stem}.svg` : ""}\n`);
