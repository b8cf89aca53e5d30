/**
 * Mattermost REST calls through @mattermost/client's Client4 (posts, edits, uploads,
 * reactions, users, threads), file downloads with fetch (Client4 only builds their URL), and
 * how the delivery queue judges a failure. Client4 never retries; every retry is the delivery
 * queue's, counted against `sendMaxRetries`.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { Client4 } from "@mattermost/client";
import type { MediaItem } from "../../bus/types.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";

export type MattermostClient = Client4;

/** The SDK loaded on start, so configs without Mattermost never load it. */
export async function createClient(serverUrl: string, token: string): Promise<MattermostClient> {
  const sdk = (await import("@mattermost/client")).default;
  const client = new sdk.Client4();
  client.setUrl(serverUrl);
  client.setToken(token);
  // A bot authenticates by its token alone; no browser session cookies.
  client.includeCookies = false;
  return client;
}

/**
 * Client4 rejects with a ClientError whose `status_code` comes from the server's JSON error
 * body; fetch itself rejects with a TypeError when the network fails.
 */
export function classifyMattermostError(error: unknown): RetryDecision {
  if (typeof error !== "object" || error === null) return { retryable: false };
  const e = error as { status_code?: unknown; server_error_id?: unknown; url?: unknown };
  if (typeof e.status_code === "number") return { retryable: e.status_code >= 500 || e.status_code === 429 };
  // No status: the network failed (connection refused, reset), or the error body was not
  // Mattermost's JSON (a proxy's 502 page). Both are worth another attempt.
  return { retryable: true };
}

export interface PostOptions {
  rootId?: string;
  fileIds?: string[];
}

export async function createPost(client: MattermostClient, channelId: string, message: string, options: PostOptions = {}): Promise<string> {
  const post: Record<string, unknown> = { channel_id: channelId, message };
  if (options.rootId) post.root_id = options.rootId;
  if (options.fileIds?.length) post.file_ids = options.fileIds;
  const created = await client.createPost(post as unknown as Parameters<MattermostClient["createPost"]>[0]);
  return created.id;
}

export async function editPost(client: MattermostClient, postId: string, message: string): Promise<void> {
  await client.patchPost({ id: postId, message });
}

export interface LoadedFile {
  name: string;
  data: Buffer;
  contentType?: string;
}

/** Reads a reply's file; undefined when it has no local path or cannot be read. */
export async function loadFile(item: MediaItem): Promise<LoadedFile | undefined> {
  if (!item.path) return undefined;
  try {
    const data = await readFile(item.path);
    return { name: item.name ?? basename(item.path), data, ...(item.mimeType ? { contentType: item.mimeType } : {}) };
  } catch {
    return undefined;
  }
}

/** `POST /files` (multipart: channel_id + files); returns the new file's id for a post's `file_ids`. */
export async function uploadFile(client: MattermostClient, channelId: string, file: LoadedFile): Promise<string> {
  const form = new FormData();
  form.append("channel_id", channelId);
  form.append("files", new Blob([file.data], file.contentType ? { type: file.contentType } : {}), file.name);
  const result = await client.uploadFile(form);
  const id = result.file_infos[0]?.id;
  if (!id) throw new Error(`mattermost: upload of ${file.name} returned no file id`);
  return id;
}

export interface FileMeta {
  name: string;
  mimeType?: string;
  size?: number;
}

/** The files attached to a post (`GET /posts/{id}/files/info`). */
export async function postFiles(client: MattermostClient, postId: string): Promise<Array<FileMeta & { id: string }>> {
  const infos = await client.getFileInfosForPost(postId);
  return infos.map((info) => ({ id: info.id, name: info.name || info.id, ...(info.mime_type ? { mimeType: info.mime_type } : {}), size: info.size }));
}

export async function downloadFile(client: MattermostClient, fileId: string): Promise<Uint8Array> {
  const response = await fetch(client.getFileUrl(fileId, 0), { headers: { Authorization: `Bearer ${client.getToken()}` } });
  if (!response.ok) throw new Error(`file ${fileId}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

export async function react(client: MattermostClient, botId: string, postId: string, emoji: string, add: boolean): Promise<void> {
  if (add) await client.addReaction(botId, postId, emoji);
  else await client.removeReaction(botId, postId, emoji);
}

export interface ThreadPost {
  id: string;
  userId: string;
  message: string;
}

/** The thread's posts, oldest first (at most `limit`). */
export async function threadPosts(client: MattermostClient, rootId: string, limit: number): Promise<ThreadPost[]> {
  const list = await client.getPaginatedPostThread(rootId, { fetchThreads: true, perPage: limit, direction: "down" } as Parameters<MattermostClient["getPaginatedPostThread"]>[1]);
  const posts = list.order.map((id) => list.posts[id]).filter((p) => p !== undefined);
  posts.sort((a, b) => a.create_at - b.create_at);
  return posts.slice(-limit).map((p) => ({ id: p.id, userId: p.user_id, message: p.message }));
}
