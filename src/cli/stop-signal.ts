/**
 * The first SIGINT or SIGTERM, as a promise: how long-running commands (`gateway`, `logs -f`)
 * learn they should stop. A seam, so tests stop them without sending signals.
 */

/** Resolves with the signal's name on the first SIGINT or SIGTERM. */
export type StopSignal = () => Promise<string>;

export const processSignal: StopSignal = () =>
  new Promise((resolve) => {
    const on = (name: string) => (): void => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      resolve(name);
    };
    const onInt = on("SIGINT");
    const onTerm = on("SIGTERM");
    process.once("SIGINT", onInt);
    process.once("SIGTERM", onTerm);
  });
