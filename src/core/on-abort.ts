/**
 * Abort callbacks on one `EventTarget` listener per signal.
 *
 * Every model call and tool call of a turn watches the turn's signal for as long as it runs:
 * with `addEventListener` / `removeEventListener` each, a three-round turn paid thirteen pairs
 * of Node's EventTarget bookkeeping (a listener record, option parsing, a `once` wrapper, a
 * linear removal). Here a signal gets one native listener, the first time anything watches it,
 * and each watcher is an entry in a Set that its dispose deletes again.
 *
 * Behaves as `addEventListener("abort", callback, { once: true })`: each callback runs once, in
 * the order they were added, and one that throws does not stop the others (its error is thrown
 * on the next tick, as EventTarget does, where `uncaughtException` sees it).
 */

const watchers = new WeakMap<AbortSignal, Set<() => void>>();

const noop = (): void => undefined;

/**
 * Calls `callback` once when `signal` aborts; at once (synchronously) when it already has. The
 * returned function stops watching (idempotent; a no-op once the callback ran).
 */
export function onAbort(signal: AbortSignal | undefined, callback: () => void): () => void {
  if (!signal) return noop;
  if (signal.aborted) {
    callback();
    return noop;
  }
  let set = watchers.get(signal);
  if (!set) {
    const own = new Set<() => void>();
    watchers.set(signal, own);
    signal.addEventListener("abort", () => runWatchers(signal, own), { once: true });
    set = own;
  }
  // The same callback twice is watched once, as with addEventListener.
  set.add(callback);
  const watching = set;
  return () => void watching.delete(callback);
}

function runWatchers(signal: AbortSignal, set: Set<() => void>): void {
  watchers.delete(signal);
  // A callback may dispose others (or itself) while these run: each runs unless disposed before its turn.
  for (const entry of set) {
    set.delete(entry);
    try {
      entry();
    } catch (err) {
      process.nextTick(() => {
        throw err;
      });
    }
  }
}
