/**
 * Request bodies as bytes, with the part that repeats on every call serialised once.
 *
 * Every model call of every turn sends the same tool definitions: tens of KB of JSON schema,
 * most of the body. Adapters put their wire-format tools in a `JsonList`; `encodeJsonBody`
 * serialises a list's items once per item object and reuses the bytes of a whole list while
 * its items are the same objects, so a call stringifies and encodes only what changed (the
 * messages; the sender copies the chunks into one buffer, a memcpy). The output is byte for
 * byte what `JSON.stringify(body)` gives, and a `JsonList` serialises as its items anywhere
 * else (logs, tests, `fetch`).
 */

/** An array whose items are stable objects worth caching as JSON (see `encodeJsonBody`). */
export class JsonList<T extends object = object> {
  constructor(readonly items: readonly T[]) {}

  toJSON(): readonly T[] {
    return this.items;
  }
}

/**
 * An array that changes on every call while its large items repeat: a conversation's messages,
 * where each call adds a few to the same history and tool results run to tens of KB. Items
 * `isStable` says are kept (never mutated) have their bytes cached per object, so they are
 * serialised and encoded once; the others are serialised with each call, in runs (one
 * `JSON.stringify` is cheaper than a cache entry for a short message). Serialises as its items
 * anywhere else.
 */
export class JsonItems<T extends object = object> {
  constructor(
    readonly items: readonly T[],
    readonly isStable: (item: T) => boolean = () => false,
  ) {}

  toJSON(): readonly T[] {
    return this.items;
  }
}

/** A body ready to send: its chunks in order and their total length in bytes. */
export interface EncodedBody {
  chunks: Buffer[];
  byteLength: number;
}

interface ItemJson {
  /** Identifies the item in list keys. */
  id: number;
  json: string;
}

const itemJson = new WeakMap<object, ItemJson>();
let nextItemId = 1;
/** Whole lists by the ids of their items; a handful of agents' tool lists at once. */
const MAX_LISTS = 64;
const listBytes = new Map<string, Buffer>();

function jsonOfItem(item: object): ItemJson {
  let entry = itemJson.get(item);
  if (!entry) {
    entry = { id: nextItemId++, json: JSON.stringify(item) };
    itemJson.set(item, entry);
  }
  return entry;
}

function bytesOfList(list: JsonList): Buffer {
  const items = list.items;
  const entries: ItemJson[] = new Array<ItemJson>(items.length);
  let key = "";
  for (let i = 0; i < items.length; i++) {
    const entry = jsonOfItem(items[i]!);
    entries[i] = entry;
    key += i === 0 ? `${entry.id}` : `,${entry.id}`;
  }
  let bytes = listBytes.get(key);
  if (bytes) {
    // Most recently used last, so the oldest list is the one dropped.
    listBytes.delete(key);
  } else {
    let json = "[";
    for (let i = 0; i < entries.length; i++) json += i === 0 ? entries[i]!.json : `,${entries[i]!.json}`;
    bytes = Buffer.from(`${json}]`);
    if (listBytes.size >= MAX_LISTS) listBytes.delete(listBytes.keys().next().value!);
  }
  listBytes.set(key, bytes);
  return bytes;
}

const itemBytes = new WeakMap<object, Buffer>();

function bytesOfItem(item: object): Buffer {
  let bytes = itemBytes.get(item);
  if (!bytes) {
    const json = JSON.stringify(item);
    // Its own allocation: a slice of Node's shared pool would keep a whole 8 KB slab alive.
    bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
    bytes.write(json);
    itemBytes.set(item, bytes);
  }
  return bytes;
}

/** The list's JSON as chunks: cached bytes for stable items, runs of the others serialised now. */
function chunksOfItems(list: JsonItems, chunks: Buffer[], prefix: string): string {
  let text = `${prefix}[`;
  let runStart = 0;
  let count = 0;
  const items = list.items;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (!list.isStable(item)) continue;
    if (runStart < i) {
      text += runJson(items, runStart, i, count > 0);
      count += i - runStart;
    }
    runStart = i + 1;
    chunks.push(Buffer.from(count > 0 ? `${text},` : text));
    chunks.push(bytesOfItem(item));
    text = "";
    count++;
  }
  if (runStart < items.length) text += runJson(items, runStart, items.length, count > 0);
  return `${text}]`;
}

/** Items `from` to `to` (exclusive) serialised together, without brackets. */
function runJson(items: readonly object[], from: number, to: number, comma: boolean): string {
  const json = JSON.stringify(items.slice(from, to)).slice(1, -1);
  return comma ? `,${json}` : json;
}

/** `JSON.stringify(body)` as bytes, with each top-level `JsonList` and `JsonItems` taken from the caches. */
export function encodeJsonBody(body: Record<string, unknown>): EncodedBody {
  const chunks: Buffer[] = [];
  let text = "{";
  let first = true;
  // Indexed loops here: every request passes, and V8 compiles this once it is hot.
  const keys = Object.keys(body);
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    const value = body[key];
    if (value instanceof JsonItems) {
      text = chunksOfItems(value, chunks, `${text}${first ? "" : ","}${JSON.stringify(key)}:`);
      first = false;
      continue;
    }
    if (value instanceof JsonList) {
      text += `${first ? "" : ","}${JSON.stringify(key)}:`;
      chunks.push(Buffer.from(text));
      chunks.push(bytesOfList(value));
      text = "";
      first = false;
      continue;
    }
    const json = JSON.stringify(value) as string | undefined;
    // Like JSON.stringify: properties whose value has no JSON form (undefined, functions) are left out.
    if (json === undefined) continue;
    text += `${first ? "" : ","}${JSON.stringify(key)}:${json}`;
    first = false;
  }
  chunks.push(Buffer.from(`${text}}`));
  let byteLength = 0;
  for (let i = 0; i < chunks.length; i++) byteLength += chunks[i]!.length;
  return { chunks, byteLength };
}

const wireForms = new WeakMap<object, Map<string, object>>();

/**
 * `build(source)`, built once per source object and wire format (`kind`): a tool definition's
 * wire form stays the same object across calls, so `JsonList` finds its bytes cached. Never
 * mutate the result; copy it to change it.
 */
export function stableWireForm<S extends object, T extends object>(kind: string, source: S, build: (source: S) => T): T {
  let forms = wireForms.get(source);
  if (!forms) wireForms.set(source, (forms = new Map()));
  let form = forms.get(kind) as T | undefined;
  if (!form) {
    form = build(source);
    forms.set(kind, form);
  }
  return form;
}
