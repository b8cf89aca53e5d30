/**
 * A store whose every async call is timed and reported (operation name, milliseconds, ok or
 * failed): the gateway's store latency metrics. A Proxy, so both stores and their extra
 * methods pass through unchanged and `instanceof` still holds.
 */
export type StoreCallListener = (operation: string, ms: number, ok: boolean) => void;

export function timedStore<T extends object>(store: T, report: StoreCallListener): T {
  // Keyed by the method itself, so a method replaced on the store (a test's fault injection) is the one called.
  const wrapped = new WeakMap<object, unknown>();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== "function" || typeof property !== "string" || property === "constructor") return value;
      let fn = wrapped.get(value);
      if (!fn) {
        const method = value as (...args: unknown[]) => unknown;
        // Called on the store itself: its own inner calls are not reported again.
        fn = (...args: unknown[]): unknown => {
          const started = performance.now();
          const result = method.apply(target, args);
          if (!(result instanceof Promise)) return result;
          return result.then(
            (ok: unknown) => {
              report(property, performance.now() - started, true);
              return ok;
            },
            (error: unknown) => {
              report(property, performance.now() - started, false);
              throw error;
            },
          );
        };
        wrapped.set(value, fn);
      }
      return fn;
    },
  });
}
