import { describe, expect, it } from "vitest";
import { onAbort } from "../../src/core/on-abort.js";

/** Native listeners currently attached to `signal` (Node's EventTarget keeps a count per type). */
function nativeListeners(signal: AbortSignal): number {
  const symbols = Object.getOwnPropertySymbols(signal);
  const events = symbols.find((s) => s.description === "kEvents");
  const map = events ? (signal as unknown as Record<symbol, Map<string, { size: number }>>)[events] : undefined;
  return map?.get("abort")?.size ?? 0;
}

describe("onAbort", () => {
  it("runs every watcher once, in the order added, when the signal aborts", () => {
    const controller = new AbortController();
    const seen: string[] = [];
    onAbort(controller.signal, () => seen.push("a"));
    onAbort(controller.signal, () => seen.push("b"));
    controller.abort();
    controller.abort();
    expect(seen).toEqual(["a", "b"]);
  });

  it("calls at once for a signal that has already aborted, and returns a harmless dispose", () => {
    const signal = AbortSignal.abort();
    const seen: number[] = [];
    const dispose = onAbort(signal, () => seen.push(1));
    expect(seen).toEqual([1]);
    dispose();
    expect(seen).toEqual([1]);
  });

  it("does nothing without a signal", () => {
    let called = false;
    onAbort(undefined, () => (called = true))();
    expect(called).toBe(false);
  });

  it("skips a watcher disposed before the abort, including one disposed by an earlier watcher", () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const disposeA = onAbort(controller.signal, () => seen.push("a"));
    let disposeC = (): void => undefined;
    onAbort(controller.signal, () => {
      seen.push("b");
      disposeC();
    });
    disposeC = onAbort(controller.signal, () => seen.push("c"));
    disposeA();
    controller.abort();
    expect(seen).toEqual(["b"]);
  });

  it("hangs one native listener on a signal however many watch it", () => {
    const controller = new AbortController();
    const disposers = Array.from({ length: 50 }, () => onAbort(controller.signal, () => undefined));
    expect(nativeListeners(controller.signal)).toBe(1);
    for (const dispose of disposers) dispose();
    // Watching it again reuses the one listener.
    onAbort(controller.signal, () => undefined);
    expect(nativeListeners(controller.signal)).toBe(1);
  });

  it("keeps running the others when one throws, and reports the error on the next tick", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const reported = new Promise<unknown>((resolve) => process.once("uncaughtException", resolve));
    onAbort(controller.signal, () => {
      throw new Error("watcher failed");
    });
    onAbort(controller.signal, () => seen.push("after"));
    controller.abort();
    expect(seen).toEqual(["after"]);
    expect(((await reported) as Error).message).toBe("watcher failed");
  });
});
