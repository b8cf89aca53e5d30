/**
 * Which store a process opens: SQLite `<home>/state.db` by default, PostgreSQL when the
 * configured store URL (`store.url`, env `NANOBOT_STORE_URL`) is a `postgres://` one.
 * Also parses a `--from`/`--to` location of `nanobot store copy`: a URL or a SQLite file path.
 */
import { resolve } from "node:path";
import { stateDbPath } from "../config/paths.js";
import type { Logger } from "../core/logger.js";
import type { MessageTokenCounter } from "../core/token-counts.js";
import { isPostgresUrl } from "./pg-db.js";
import { PgSessionStore } from "./pg-store.js";
import type { PortableSessionStore } from "./records.js";
import { SqliteSessionStore } from "./sqlite-store.js";
import { SessionStoreError } from "./types.js";

export type StoreLocation = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

/** `NANOBOT_STORE_URL` wins over `store.url` of the config; neither means SQLite in the home. */
export function storeLocation(options: { url?: string; env?: Record<string, string | undefined>; home: string }): StoreLocation {
  const url = options.env?.["NANOBOT_STORE_URL"]?.trim() || options.url?.trim();
  if (!url) return { kind: "sqlite", path: stateDbPath(options.home) };
  return parseStoreLocation(url, options.home);
}

/** A `postgres://` URL, a `sqlite:` URL or a path to a SQLite file (relative to `cwd`). */
export function parseStoreLocation(text: string, cwd: string): StoreLocation {
  if (isPostgresUrl(text)) return { kind: "postgres", url: text };
  if (text.startsWith("sqlite://")) return { kind: "sqlite", path: resolve(cwd, text.slice("sqlite://".length)) };
  if (text.startsWith("sqlite:")) return { kind: "sqlite", path: resolve(cwd, text.slice("sqlite:".length)) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw new SessionStoreError(`unsupported store URL ${JSON.stringify(redactUrl(text))}: expected postgres://… (or a SQLite file path)`);
  }
  return { kind: "sqlite", path: resolve(cwd, text) };
}

export interface OpenStoreOptions {
  logger?: Logger;
  tokenCounter?: MessageTokenCounter;
  /** `store.maxLeaseConnections` (PostgreSQL only). */
  maxLeaseConnections?: number;
}

export function openSessionStore(location: StoreLocation, options: OpenStoreOptions = {}): PortableSessionStore {
  const { logger, tokenCounter, maxLeaseConnections } = options;
  return location.kind === "postgres"
    ? new PgSessionStore({ url: location.url, logger, tokenCounter, ...(maxLeaseConnections !== undefined ? { maxLeaseConnections } : {}) })
    : new SqliteSessionStore({ path: location.path, logger, tokenCounter });
}

/** The location for messages: a URL without its password. */
export function describeLocation(location: StoreLocation): string {
  return location.kind === "postgres" ? redactUrl(location.url) : location.path;
}

export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]+):[^@/]*@/i, "$1:***@");
}
