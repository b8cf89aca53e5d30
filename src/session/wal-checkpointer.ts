/**
 * WAL checkpoints off the event loop, for long-running processes (the gateway).
 *
 * By default SQLite checkpoints inside the COMMIT that pushes the write-ahead log past 1000
 * pages: that one commit copies the log into the database file and syncs it, a few milliseconds
 * during which a server's event loop answers nobody. Here a worker thread with its own
 * connection runs passive checkpoints on a timer instead (they never wait for, nor block, the
 * writer), and the main connection's automatic threshold is raised to a backstop, so the log
 * still cannot grow without bound if the worker is gone. A tick that finds nothing committed
 * since a checkpoint that folded the whole log stops the timer: the worker sleeps until the
 * store's next commit wakes it (`noteCommit`, one message per idle spell), so an idle gateway's
 * threads stay asleep. The worker counts its checkpoints in shared memory and messages the main
 * thread only when asked, so a busy gateway's event loop is not woken for them either.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { Logger } from "../core/logger.js";

/** Pages in the log before the committing connection checkpoints itself (SQLite's default). */
export const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/** The main connection's threshold while the worker runs: only reached if it falls far behind. */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 10_000;
/**
 * Once a second: at the default gate's most (~60 turns a second, ~13 log pages each) a checkpoint
 * folds ~800 pages, under SQLite's own 1,000-page threshold. Each checkpoint costs the worker
 * ~0.4 ms of CPU on this class of machine, and pages rewritten within the second are copied once.
 */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1_000;

export interface WalCheckpointerOptions {
  db: Database.Database;
  path: string;
  intervalMs?: number;
  logger: Logger;
}

/** What one passive checkpoint reported: log pages, and how many of them are in the database now. */
export interface CheckpointReport {
  logPages: number;
  checkpointedPages: number;
}

/** Slots of the Int32Array the main thread and the worker share. */
const COMPLETED = 0;
const ASLEEP = 1;

/*
 * The worker's whole program, evaluated as CommonJS: a file of its own would need a separate
 * build entry and would not load from the TypeScript sources under test. It gets the driver's
 * resolved path, so it loads the same better-sqlite3 as the main thread.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("busy_timeout = 0");
const dataVersion = db.prepare("PRAGMA data_version").pluck();
// [checkpoints run, 1 while the worker sleeps], read and written by both threads without a message.
const shared = new Int32Array(workerData.shared);
const COMPLETED = ${COMPLETED};
const ASLEEP = ${ASLEEP};
// The commits of other connections seen by the last checkpoint, and whether it folded the whole log.
let seenVersion = -1;
let folded = false;
// A checkpoint asked for that failed busy: the next one answers it.
let askedPending = false;
function checkpoint(asked) {
  asked = asked || askedPending;
  askedPending = false;
  try {
    const version = dataVersion.get();
    // Nothing committed since a checkpoint that left nothing behind: sleep until a commit.
    if (!asked && folded && version === seenVersion) return sleep();
    const row = db.pragma("wal_checkpoint(PASSIVE)")[0];
    seenVersion = version;
    folded = row.checkpointed === row.log;
    Atomics.add(shared, COMPLETED, 1);
    if (asked) parentPort.postMessage({ type: "checkpoint", logPages: row.log, checkpointedPages: row.checkpointed });
  } catch (error) {
    // Another process checkpointing at the same moment answers busy: the next tick catches up,
    // and answers whoever asked for this one.
    if (asked) {
      askedPending = true;
      arm();
    }
    if (!String(error && error.code).startsWith("SQLITE_BUSY")) parentPort.postMessage({ type: "error", message: String(error && error.message) });
  }
}
let timer;
function arm() {
  timer ??= setInterval(() => checkpoint(false), workerData.intervalMs);
}
arm();
function sleep() {
  // Asleep first, then a last look: a commit the look misses saw the flag and sends "wake".
  Atomics.store(shared, ASLEEP, 1);
  if (dataVersion.get() !== seenVersion) return void Atomics.store(shared, ASLEEP, 0);
  clearInterval(timer);
  timer = undefined;
}
parentPort.on("message", (message) => {
  if (message === "wake") return arm();
  if (message === "checkpoint") return checkpoint(true);
  if (message !== "close") return;
  checkpoint(true);
  // After the last checkpoint: one that found the database busy re-arms the timer for a retry.
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ type: "closed" });
  parentPort.close();
});
parentPort.postMessage({ type: "ready" });
`;

const stoppedError = (): Error => new Error("the WAL checkpointer has stopped");

export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly db: Database.Database;
  private readonly logger: Logger;
  /** Asked-for checkpoints not answered yet: settled by the next report, rejected if the worker ends first. */
  private readonly waiters: { resolve: (report: CheckpointReport) => void; reject: (error: Error) => void }[] = [];
  private closing: Promise<void> | undefined;
  private exited = false;
  /** Shared with the worker: [COMPLETED] checkpoints run, [ASLEEP] 1 while its timer is stopped. */
  private readonly shared = new Int32Array(new SharedArrayBuffer(8));

  constructor(options: WalCheckpointerOptions) {
    this.db = options.db;
    this.logger = options.logger;
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { driver, path: options.path, intervalMs: options.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS, shared: this.shared.buffer },
      // A few MB of heap is plenty for one connection and a timer.
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 },
    });
    // The process may exit while the worker sleeps between checkpoints.
    this.worker.unref();
    this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
    this.worker.on("message", (message: { type: string; logPages?: number; checkpointedPages?: number; message?: string }) => {
      if (message.type === "checkpoint") {
        const report = { logPages: message.logPages ?? 0, checkpointedPages: message.checkpointedPages ?? 0 };
        for (const waiter of this.waiters.splice(0)) waiter.resolve(report);
      } else if (message.type === "error") {
        this.logger.warn("background WAL checkpoint failed", { error: message.message });
      }
    });
    this.worker.on("error", (error) => {
      this.logger.warn("background WAL checkpointer stopped; the database checkpoints itself again", { error: error.message });
      this.restoreAutocheckpoint();
    });
    this.worker.on("exit", () => {
      this.exited = true;
      this.restoreAutocheckpoint();
      // A worker that died (or was closed) with a checkpoint still asked for never reports it.
      for (const waiter of this.waiters.splice(0)) waiter.reject(stoppedError());
    });
  }

  /** Checkpoints the worker has run: asked for, or on its timer after a commit (an idle store's timer runs none). */
  get completed(): number {
    return Atomics.load(this.shared, COMPLETED);
  }

  /** Whether the worker stopped its timer on an idle database (the next commit wakes it). */
  get sleeping(): boolean {
    return Atomics.load(this.shared, ASLEEP) === 1;
  }

  /** After each commit of the store: wakes a worker that went to sleep on an idle database (an atomic read otherwise). */
  noteCommit(): void {
    if (Atomics.compareExchange(this.shared, ASLEEP, 1, 0) === 1 && !this.exited) this.worker.postMessage("wake");
  }

  /** Runs one checkpoint now (tests, and callers that want the log folded in before a copy). */
  checkpointNow(): Promise<CheckpointReport> {
    if (this.exited) return Promise.reject(stoppedError());
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.worker.postMessage("checkpoint");
    });
  }

  /** Stops the timer after a last checkpoint; the main connection checkpoints on its own again. */
  close(): Promise<void> {
    this.closing ??= this.exited
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          this.worker.once("exit", () => resolve());
          // Held while closing: an unref'd worker would let the process end before the last checkpoint.
          this.worker.ref();
          this.worker.postMessage("close");
        });
    return this.closing;
  }

  private restoreAutocheckpoint(): void {
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  }
}
