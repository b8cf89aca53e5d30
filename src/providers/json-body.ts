/**
 * Request bodies as bytes, with the part that repeats on every call serialised once.
 *
 * Every model call of every turn sends the same tool definitions: tens of KB of JSON schema,
 * most of the body. Adapters put their wire-format tools in a `JsonList`; `encodeJsonBody`
 * serialises a list's items once per item object and reuses the bytes of a whole list while
 * its items are the same objects, so a call stringifies, encodes and copies only what changed
 * (the messages). The output is byte for byte what `JSON.stringify(body)` gives, and a
 * `JsonList` serialises as its items anywhere else (logs, tests, `fetch`).
 */

/** An array whose items are stable objects worth caching as JSON (see `encodeJsonBody`). */
export class JsonList<T extends object = object> {
  constructor(readonly items: readonly T[]) {}

  toJSON(): readonly T[] {
    return this.items;
  }
}

/**
 * An array that changes on every call while its items repeat: a conversation's messages, where
 * each call adds a few to the same history. Each item's bytes are cached per item object (so
 * items must never be mutated once sent); the array is their concatenation. Serialises as its
 * items anywhere else.
 */
export class JsonItems<T extends object = object> {
  constructor(readonly items: readonly T[]) {}

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
  const entries = list.items.map(jsonOfItem);
  const key = entries.map((e) => e.id).join(",");
  let bytes = listBytes.get(key);
  if (bytes) {
    // Most recently used last, so the oldest list is the one dropped.
    listBytes.delete(key);
  } else {
    bytes = Buffer.from(`[${entries.map((e) => e.json).join(",")}]`);
    if (listBytes.size >= MAX_LISTS) listBytes.delete(listBytes.keys().next().value!);
  }
  listBytes.set(key, bytes);
  return bytes;
}

const itemBytes = new WeakMap<object, Buffer>();
const OPEN = Buffer.from("[");
const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]");

function bytesOfItem(item: object): Buffer {
  let bytes = itemBytes.get(item);
  if (!bytes) {
    const json = JSON.stringify(item);
    // Its own allocation: a slice of Node's shared pool would keep the whole 8 KB slab alive.
    bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
    bytes.write(json);
    itemBytes.set(item, bytes);
  }
  return bytes;
}

function bytesOfItems(list: JsonItems): Buffer {
  const parts: Buffer[] = [OPEN];
  list.items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(bytesOfItem(item));
  });
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

/** `JSON.stringify(body)` as bytes, with each top-level `JsonList` and `JsonItems` taken from the caches. */
export function encodeJsonBody(body: Record<string, unknown>): EncodedBody {
  const chunks: Buffer[] = [];
  let text = "{";
  let first = true;
  for (const [key, value] of Object.entries(body)) {
    if (value instanceof JsonList || value instanceof JsonItems) {
      text += `${first ? "" : ","}${JSON.stringify(key)}:`;
      chunks.push(Buffer.from(text));
      chunks.push(value instanceof JsonList ? bytesOfList(value) : bytesOfItems(value));
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
  return { chunks, byteLength: chunks.reduce((n, c) => n + c.length, 0) };
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
