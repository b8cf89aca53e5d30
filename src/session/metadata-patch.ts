/**
 * A session metadata patch applied to the stored object (both stores, inside their write
 * transactions): keys set to `undefined` are removed, the rest replace what was there.
 */
import type { MetadataPatch } from "./types.js";

/** The stored metadata JSON with `patch` applied, as JSON again. */
export function patchedMetadataJson(storedJson: string, patch: MetadataPatch): string {
  const metadata = JSON.parse(storedJson) as Record<string, unknown>;
  const changes = typeof patch === "function" ? patch(metadata) : patch;
  // Indexed over the keys: every turn's closing passes here.
  const keys = Object.keys(changes);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const value = changes[key];
    if (value === undefined) delete metadata[key];
    else metadata[key] = value;
  }
  return JSON.stringify(metadata);
}
