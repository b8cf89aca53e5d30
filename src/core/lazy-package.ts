/**
 * Synchronous, on-first-use loading of a package that only some paths need (a YAML parser for
 * YAML configs, croner for cron expressions), so every command does not pay to load it at start.
 * Uses the package's CommonJS build through `require`, which is synchronous; the bundler leaves
 * these calls alone, so the package loads from node_modules when first used.
 */
import { createRequire } from "node:module";

const requireFromHere = createRequire(import.meta.url);

export function lazyPackage<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireFromHere(name) as T);
}
