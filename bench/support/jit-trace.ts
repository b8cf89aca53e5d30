/**
 * V8's optimizing-compiler traces inside the peers bench's measured window (`profile-jit.ts`):
 * the worker runs with `--trace-opt --trace-deopt` and marks its window on stdout, where the
 * traces go (line-buffered through `stdbuf`, so the marks and the traces keep their order).
 */
import { WINDOW_MARK } from "../contenders/types.js";
import type { WorkerJob, WorkerResult } from "../contenders/worker.js";
import { runWorkerProcess } from "./worker-process.js";

export interface WindowTrace {
  /** Whether both marks were seen: a worker that never marked its window traced nothing here. */
  sawWindow: boolean;
  /** Milliseconds V8 reports per compiled function (prepare + concurrent compile + finalize). */
  compiles: { name: string; ms: number }[];
  deopts: string[];
}

/** `[completed compiling 0x… <JSFunction name (sfi = 0x…)> (target TURBOFAN) - took 0.012, 0.889, 0.032 ms]` */
const COMPILED = /^\[completed compiling .*?<JSFunction (\S*).*took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/;
/** `[bailout (kind: deopt-eager, reason: …): begin. deoptimizing 0x… <JSFunction name …` */
const BAILOUT = /^\[bailout \(kind: ([^,]+), reason: ([^)]*)\).*?<JSFunction (\S*)/;

/** An anonymous function's trace reads `<JSFunction (sfi = 0x…)>`. */
function functionName(traced: string | undefined): string {
  return !traced || traced.startsWith("(") ? "(anonymous)" : traced;
}

export function parseWindow(stdout: string): WindowTrace {
  const trace: WindowTrace = { sawWindow: false, compiles: [], deopts: [] };
  let inside = false;
  for (const line of stdout.split("\n")) {
    if (line.startsWith(WINDOW_MARK)) {
      inside = line.includes("start");
      if (!inside) trace.sawWindow = true;
      continue;
    }
    if (!inside) continue;
    const compiled = COMPILED.exec(line);
    if (compiled) {
      trace.compiles.push({ name: functionName(compiled[1]), ms: Number(compiled[2]) + Number(compiled[3]) + Number(compiled[4]) });
      continue;
    }
    const bailout = BAILOUT.exec(line);
    if (bailout) trace.deopts.push(`${functionName(bailout[3])}: ${bailout[2]} (${bailout[1]})`);
  }
  return trace;
}

/** Runs `job` in the peers bench's worker under V8's traces; rejects unless the worker marked its window. */
export async function runTraced(worker: string, job: WorkerJob): Promise<{ result: WorkerResult; trace: WindowTrace }> {
  let run: { result: WorkerResult; stdout: string };
  try {
    // stdbuf: V8 prints its traces through C's stdio, block-buffered on a pipe without it.
    run = await runWorkerProcess(worker, job, {
      wrapper: ["stdbuf", "-oL"],
      nodeFlags: ["--trace-opt", "--trace-deopt"],
      env: { BENCH_MARK_WINDOW: "1" },
      captureStdout: true,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new Error("profile-jit needs `stdbuf` (GNU coreutils) to keep V8's traces in order with the window's marks");
    throw err;
  }
  const trace = parseWindow(run.stdout);
  if (!trace.sawWindow) throw new Error(`${job.contender}: the worker did not mark its measured window (a loop job marks it)`);
  return { result: run.result, trace };
}
