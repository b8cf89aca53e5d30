/**
 * Self and inclusive time per function from a V8 CPU profile (`.cpuprofile` / inspector
 * `Profiler.stop`), and the Markdown tables `bench/profiles/*.md` keep. Used by
 * `profile-turn.ts` (in-process) and `profile-gateway.ts` (a gateway process).
 */
import { readFileSync } from "node:fs";
import type { Profiler } from "node:inspector";
import { SourceMap } from "node:module";
import { dirname, relative, resolve } from "node:path";
import { REPO_DIR } from "./processes.js";

export interface FunctionCost {
  name: string;
  where: string;
  selfUs: number;
  totalUs: number;
}

/**
 * Where a frame's code comes from, relative to the repo. Frames in the bundled CLI
 * (`dist/bundle/main.cjs`) are mapped through its source map to the tsc output they were bundled
 * from, then named by their source (`dist/gateway/app.js` → `src/gateway/app.ts`).
 */
export function frameLocator(): (url: string, line: number, column: number) => string {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (file: string): SourceMap | null => {
    let map = maps.get(file);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")) as ConstructorParameters<typeof SourceMap>[0]);
      } catch {
        map = null;
      }
      maps.set(file, map);
    }
    return map;
  };
  return (url, line, column) => {
    if (!url) return "";
    const file = url.replace(/^file:\/\//, "");
    if (!file.startsWith("/")) return line > 0 ? `${file}:${line + 1}` : file;
    const map = file.includes("/dist/bundle/") ? mapOf(file) : null;
    if (map) {
      const entry = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
      if (entry.originalSource) {
        const original = relative(REPO_DIR, resolve(dirname(file), entry.originalSource.replace(/^file:\/\//, "")));
        const source = original.replace(/^.*?dist\/(?!bundle)(.*)\.js$/, "src/$1.ts");
        return source.startsWith("src/") ? source : `${source}:${(entry.originalLine ?? 0) + 1}`;
      }
    }
    // tsx-loaded sources report line 1; a line is only worth showing for plain JS.
    const rel = relative(REPO_DIR, file);
    return line > 0 && !rel.endsWith(".ts") ? `${rel}:${line + 1}` : rel;
  };
}

/** Self and total (inclusive) time per function, from the profile's samples. */
export function summarise(p: Profiler.Profile): { costs: FunctionCost[]; totalUs: number } {
  const locate = frameLocator();
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const hits = new Map<number, number>();
  const deltas = p.timeDeltas ?? [];
  (p.samples ?? []).forEach((id, i) => hits.set(id, (hits.get(id) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0)));
  const costs = new Map<string, FunctionCost>();
  const cost = (n: Profiler.ProfileNode) => {
    const f = n.callFrame;
    const name = f.functionName || "(anonymous)";
    const where = locate(f.url, f.lineNumber, f.columnNumber);
    const id = `${name}@${where}`;
    let c = costs.get(id);
    if (!c) costs.set(id, (c = { name, where, selfUs: 0, totalUs: 0 }));
    return c;
  };
  let totalUs = 0;
  for (const [id, us] of hits) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === "(idle)") continue;
    totalUs += us;
    cost(node).selfUs += us;
    // Inclusive time once per function per stack (recursion counted once).
    const seen = new Set<FunctionCost>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const c = cost(byId.get(at)!);
      if (!seen.has(c)) {
        seen.add(c);
        c.totalUs += us;
      }
    }
  }
  return { costs: [...costs.values()], totalUs };
}

/**
 * The top `rows` functions by self or total time, in ms per `unit` (a turn, a request); with
 * `bytes`, the figures are bytes (a heap profile) and print as KB per unit.
 */
export function costTable(costs: FunctionCost[], by: "selfUs" | "totalUs", totalUs: number, perUnit: number, rows = 30, unit = "turn", bytes = false): string {
  const lines = [`| function | where | ${bytes ? "KB" : "ms"}/${unit} | % |`, "| --- | --- | ---: | ---: |"];
  for (const c of [...costs].sort((a, b) => b[by] - a[by]).slice(0, rows)) {
    if (c.name === "(root)" || c.name === "(program)") continue;
    lines.push(`| \`${c.name}\` | ${c.where} | ${(c[by] / (bytes ? 1024 : 1000) / perUnit).toFixed(bytes ? 1 : 3)} | ${((100 * c[by]) / totalUs).toFixed(1)} |`);
  }
  return lines.join("\n");
}

/** A sampling heap profile's tree (`HeapProfiler.stopSampling`). */
export interface HeapProfileNode {
  callFrame: Profiler.ProfileNode["callFrame"];
  selfSize: number;
  children: HeapProfileNode[];
}

/**
 * Bytes allocated per function (self, and inclusive of callees), from a sampling heap profile;
 * the figures land in `selfUs`/`totalUs` so `costTable` prints them (as KB with `bytes`).
 */
export function summariseHeap(head: HeapProfileNode): { costs: FunctionCost[]; totalUs: number } {
  const locate = frameLocator();
  const costs = new Map<string, FunctionCost>();
  let total = 0;
  const walk = (node: HeapProfileNode, stack: FunctionCost[]): number => {
    const f = node.callFrame;
    const name = f.functionName || "(anonymous)";
    const where = locate(f.url, f.lineNumber, f.columnNumber);
    const id = `${name}@${where}`;
    let c = costs.get(id);
    if (!c) costs.set(id, (c = { name, where, selfUs: 0, totalUs: 0 }));
    c.selfUs += node.selfSize;
    total += node.selfSize;
    let inclusive = node.selfSize;
    const next = stack.includes(c) ? stack : [...stack, c];
    for (const child of node.children) inclusive += walk(child, next);
    // Inclusive bytes once per function per stack (recursion counted once).
    if (!stack.includes(c)) c.totalUs += inclusive;
    return inclusive;
  };
  walk(head, []);
  return { costs: [...costs.values()], totalUs: total };
}
