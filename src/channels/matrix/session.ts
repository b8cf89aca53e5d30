/**
 * The bot's Matrix session: an access token from the config, or a password login whose
 * session (token and device) is kept in `<home>/matrix/<channel>-session.json` and reused on
 * the next start, as the Python nanobot keeps its `session.json` (a new login per start would
 * leave a new device behind every time).
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type * as MatrixSdk from "matrix-js-sdk";
import type { ICreateClientOpts, MatrixClient } from "matrix-js-sdk";
import type { MatrixConfig } from "./config.js";

export interface MatrixSession {
  userId: string;
  accessToken: string;
  deviceId?: string;
}

interface StoredSession extends MatrixSession {
  homeserver: string;
}

export function sessionPath(home: string, channel: string): string {
  return join(home, "matrix", `${channel.replace(/[^\w-]/g, "_")}-session.json`);
}

export async function readStoredSession(path: string, config: MatrixConfig): Promise<MatrixSession | undefined> {
  try {
    const stored = JSON.parse(await readFile(path, "utf8")) as Partial<StoredSession>;
    if (stored.homeserver !== config.homeserver || stored.userId !== config.userId || typeof stored.accessToken !== "string") return undefined;
    return { userId: stored.userId, accessToken: stored.accessToken, ...(stored.deviceId ? { deviceId: stored.deviceId } : {}) };
  } catch {
    return undefined;
  }
}

export async function forgetStoredSession(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** Logs in with `channels.<name>.password` and keeps the session (owner-only file: it is a credential). */
export async function passwordLogin(client: MatrixClient, config: MatrixConfig, path: string): Promise<MatrixSession> {
  const response = await client.loginRequest({
    type: "m.login.password",
    identifier: { type: "m.id.user", user: config.userId },
    password: config.password!,
    initial_device_display_name: "nanobot",
    ...(config.deviceId ? { device_id: config.deviceId } : {}),
  });
  const session: MatrixSession = { userId: response.user_id, accessToken: response.access_token, deviceId: response.device_id };
  await mkdir(join(path, ".."), { recursive: true });
  const stored: StoredSession = { ...session, homeserver: config.homeserver };
  await writeFile(path, JSON.stringify(stored, null, 2), { mode: 0o600 });
  return session;
}

/** Ends a kept session on the homeserver (`/logout` deletes its device and the device's keys). */
export async function logoutStoredSession(sdk: typeof MatrixSdk, homeserver: string, session: MatrixSession, logger: ICreateClientOpts["logger"]): Promise<void> {
  const client = sdk.createClient({ baseUrl: homeserver, accessToken: session.accessToken, userId: session.userId, ...(logger ? { logger } : {}) });
  await client.logout(true);
}
