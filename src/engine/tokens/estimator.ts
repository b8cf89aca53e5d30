/**
 * Token estimates for governance and compaction decisions. Counts are cached per message
 * object, and per message id (checked against a cheap content signature) so a history reloaded
 * from storage as new objects is not tokenised again either. A 10k-message history is
 * tokenised once, not on every iteration or turn. A store saves each message's exact count with
 * its row (`exact`), and counts attached to messages it reads are taken as they are, so a new
 * process does not tokenise a stored history either.
 */
import type { ToolDefinition } from "../../core/llm.js";
import type { ContentPart, Message } from "../../core/messages.js";
import { attachedTokenCount } from "../../core/token-counts.js";
import type { TokenCount } from "../../core/token-counts.js";
import { imageTokens, inlineImageSize } from "./image-size.js";
import { approximateCount, countSliced, encodingForModel, loadEncoding, type CountFn } from "./tokenizer.js";

export interface TokenEstimator {
  /** Loads the tokenizer; estimates before it resolves use ~4 chars/token. */
  load(): Promise<void>;
  /** True once counts are exact (the tokenizer has loaded). */
  readonly ready: boolean;
  text(text: string): number;
  message(message: Message): number;
  tools(tools: readonly ToolDefinition[]): number;
  /** The rules exact counts are made by (`<encoding>#<version>`); stored counts of another basis are not used. */
  readonly basis: string;
  /** The exact count of a message, to store with it; undefined until the tokenizer has loaded. */
  exact(message: Message): TokenCount | undefined;
}

/**
 * Version of the counting rules below (framing overheads, slicing, part costs): bump it when
 * they change, so counts stored under the old rules are made again instead of trusted.
 */
const COUNT_RULES_VERSION = 1;

/** Role and framing tokens every chat message costs (OpenAI's documented ~3–4). */
const MESSAGE_OVERHEAD = 4;
const TOOL_CALL_OVERHEAD = 4;
const FILE_TOKENS = 1600;
/** The id cache is dropped wholesale past this size; rebuilding it costs one tokenisation pass. */
const MAX_ID_ENTRIES = 250_000;
const CACHED_SLICE_MIN = 256;
/** ~4 MB of slice text at most; dropped wholesale when full. */
const MAX_SLICE_ENTRIES = 4096;
/** How the context builder separates a system prompt's sections. */
const SECTION_BREAK = "\n\n---\n\n";
const ROLE_CODE = { system: 0, user: 1, assistant: 2, tool: 3 } as const;

/** Role, part count and content length: different whenever governance or an edit changed the message. */
function signature(message: Message): number {
  let length = 0;
  for (const p of message.content) {
    if (p.type === "text" || p.type === "reasoning") length += p.text.length;
    else if (p.type === "toolCall") length += p.rawArguments.length + p.name.length;
    else if (p.type === "image" || p.type === "file") length += (p.data?.length ?? 0) + (p.url?.length ?? 0);
    else length += 1;
  }
  return (length * 64 + message.content.length) * 4 + ROLE_CODE[message.role];
}

export function createTokenEstimator(options: { model: string }): TokenEstimator {
  const encoding = encodingForModel(options.model);
  const basis = `${encoding}#${COUNT_RULES_VERSION}`;
  let count: CountFn = approximateCount;
  let loading: Promise<void> | undefined;
  const messageCache = new WeakMap<Message, number>();
  const roughCache = new WeakMap<Message, number>();
  const idCache = new Map<string, { signature: number; tokens: number }>();
  const toolsCache = new WeakMap<readonly ToolDefinition[], number>();

  // System prompts and tool lists are rebuilt every turn but mostly repeat: their ≤ 1 KB slices
  // are counted once. Slices under CACHED_SLICE_MIN are cheaper to count than to look up.
  const sliceCache = new Map<string, number>();
  const countCached: CountFn = (slice) => {
    if (slice.length < CACHED_SLICE_MIN) return count(slice);
    let tokens = sliceCache.get(slice);
    if (tokens === undefined) {
      tokens = count(slice);
      if (sliceCache.size >= MAX_SLICE_ENTRIES) sliceCache.clear();
      sliceCache.set(slice, tokens);
    }
    return tokens;
  };
  /**
   * By the definition's parameters object (shared across turns), then name, then description
   * (compared, not concatenated into a key: this runs for every tool several times a turn).
   * Rough counts are kept apart, so the exact ones replace them once the tokenizer is loaded.
   */
  type ToolCounts = WeakMap<object, Map<string, { description: string; tokens: number }>>;
  const exactToolCounts: ToolCounts = new WeakMap();
  const roughToolCounts: ToolCounts = new WeakMap();
  const toolTokens = (tool: ToolDefinition): number => {
    const counts = count === approximateCount ? roughToolCounts : exactToolCounts;
    let byName = counts.get(tool.parameters);
    const hit = byName?.get(tool.name);
    if (hit !== undefined && hit.description === tool.description) return hit.tokens;
    const tokens = text(JSON.stringify(tool));
    if (!byName) counts.set(tool.parameters, (byName = new Map()));
    byName.set(tool.name, { description: tool.description, tokens });
    return tokens;
  };
  const sliced = (value: string): number => (value.length === 0 ? 0 : countSliced(countCached, value));
  const text = (value: string): number => {
    if (value.length === 0) return 0;
    if (count === approximateCount) return countSliced(count, value);
    if (value.length >= 2 * CACHED_SLICE_MIN) {
      // A system prompt's sections change apart (the session's summaries, the turn's time and
      // session): counted section by section, the unchanged ones keep hitting the slice cache.
      if (value.includes(SECTION_BREAK)) {
        let total = 0;
        let start = 0;
        for (let at = value.indexOf(SECTION_BREAK); at !== -1; at = value.indexOf(SECTION_BREAK, start)) {
          total += sliced(value.slice(start, at + SECTION_BREAK.length));
          start = at + SECTION_BREAK.length;
        }
        return total + sliced(value.slice(start));
      }
      // Otherwise a short last paragraph (a prompt's own facts) is counted apart for the same reason.
      const cut = value.lastIndexOf("\n\n") + 2;
      if (cut > 2 && value.length - cut < 2 * CACHED_SLICE_MIN) return sliced(value.slice(0, cut)) + count(value.slice(cut));
    }
    return sliced(value);
  };

  const part = (p: ContentPart): number => {
    switch (p.type) {
      case "text":
      case "reasoning":
        return text(p.text);
      case "toolCall":
        return TOOL_CALL_OVERHEAD + text(p.name) + text(p.rawArguments || JSON.stringify(p.arguments));
      case "image":
        return imageTokens(inlineImageSize(p.data, p.url));
      case "file":
        return FILE_TOKENS;
      case "toolResult":
        return p.content.reduce((sum, c) => sum + part(c), 0);
      case "resource":
        return text(p.uri) + (p.text ? text(p.text) : p.blob ? FILE_TOKENS : 0);
      case "resourceLink":
        return text(p.uri) + text(p.name ?? "") + text(p.description ?? "");
      case "ui":
        return text(p.uri);
    }
  };

  /** `byId`: also remember the count by message id (not for counts made to be stored with the row, which carries them from then on). */
  const countMessage = (m: Message, byId: boolean): number => {
    const cached = messageCache.get(m);
    if (cached !== undefined) return cached;
    const rough = count === approximateCount;
    if (rough) {
      const estimate = roughCache.get(m);
      if (estimate !== undefined) return estimate;
    }
    // Stored with the message's row under the same rules: as exact as counting it again, and
    // used before the tokenizer loads too (a replayed session is then judged on exact figures).
    const stored = attachedTokenCount(m, basis);
    if (stored !== undefined) {
      if (!rough) messageCache.set(m, stored);
      return stored;
    }
    const sig = signature(m);
    const known = idCache.get(m.id);
    if (known && known.signature === sig) {
      messageCache.set(m, known.tokens);
      return known.tokens;
    }
    let total = MESSAGE_OVERHEAD;
    for (const p of m.content) total += part(p);
    // Rough counts are kept apart, so the exact ones replace them once the tokenizer is loaded.
    if (rough) roughCache.set(m, total);
    else {
      messageCache.set(m, total);
      if (byId) {
        if (idCache.size >= MAX_ID_ENTRIES) idCache.clear();
        idCache.set(m.id, { signature: sig, tokens: total });
      }
    }
    return total;
  };
  const message = (m: Message): number => countMessage(m, true);

  return {
    basis,
    load() {
      loading ??= loadEncoding(encoding).then((fn) => {
        count = fn;
      });
      return loading;
    },
    get ready() {
      return count !== approximateCount;
    },
    text,
    message,
    exact(m) {
      return count === approximateCount ? undefined : { basis, tokens: countMessage(m, false) };
    },
    tools(tools) {
      if (tools.length === 0) return 0;
      const cached = toolsCache.get(tools);
      if (cached !== undefined) return cached;
      // Per tool, so a list rebuilt every turn around the same definitions is not re-serialised;
      // the sum differs from counting the whole JSON array by a token or two of punctuation.
      let total = 0;
      for (const tool of tools) total += toolTokens(tool);
      if (count !== approximateCount) toolsCache.set(tools, total);
      return total;
    },
  };
}

const shared = new Map<string, TokenEstimator>();

/** One estimator (and cache) per encoding for the process: turns of a session share counts. */
export function sharedTokenEstimator(model: string): TokenEstimator {
  const encoding = encodingForModel(model);
  let estimator = shared.get(encoding);
  if (!estimator) {
    estimator = createTokenEstimator({ model });
    shared.set(encoding, estimator);
  }
  return estimator;
}

/** Sum of message estimates. */
export function estimateMessages(estimator: TokenEstimator, messages: readonly Message[]): number {
  let total = 0;
  for (const m of messages) total += estimator.message(m);
  return total;
}
