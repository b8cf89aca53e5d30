/**
 * The scripted fake LLM's public vocabulary. One queue of steps; each step is rendered in the
 * wire format of whichever API the request used (OpenAI Chat Completions at
 * `POST /v1/chat/completions`, OpenAI Responses at `POST /v1/responses`, Anthropic Messages at
 * `POST /v1/messages`), streamed (SSE) when the request asks for `stream: true`, JSON otherwise.
 */

export interface FakeToolCall {
  /** Generated (`call_…` / `toolu_…`) when omitted. */
  id?: string;
  name: string;
  /** An object is JSON-encoded; a string is sent verbatim (use it for broken JSON). */
  arguments: string | Record<string, unknown>;
}

/**
 * Token counts in OpenAI's convention (prompt tokens include cached ones); the Anthropic
 * rendering reports `input_tokens = promptTokens - cachedTokens` and `cache_read_input_tokens`.
 */
export interface FakeUsage {
  promptTokens?: number;
  completionTokens?: number;
  cachedTokens?: number;
}

/** A model answer. */
export interface FakeReply {
  kind?: "reply";
  text?: string;
  /** Reasoning: `reasoning_content` (chat), reasoning item (responses), thinking block (anthropic). */
  reasoning?: string;
  /** Anthropic thinking signature / Responses encrypted content (defaults to a fixed token). */
  reasoningSignature?: string;
  toolCalls?: FakeToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: "stop" | "length" | "tool_calls" | "content_filter";
  usage?: FakeUsage;
  /** Wait before sending response headers. */
  delayMs?: number;
  /** Wait between SSE chunks (streaming only). */
  chunkDelayMs?: number;
  /** Split text into deltas of this many characters (default: whole words). */
  chunkSize?: number;
  /**
   * Stop after `afterChunks` events have reached the client and wait for `until` before sending
   * the rest: a test can hold a stream open until it has seen what the first events caused.
   */
  hold?: { afterChunks: number; until: Promise<unknown> };
  /** Streaming faults. */
  fault?:
    | { type: "cut"; afterChunks: number } // destroy the socket after N chunks
    | { type: "stall"; afterChunks: number } // stop sending after N chunks, keep socket open
    | { type: "no_done" } // end the response without the terminal event ([DONE] / message_stop)
    | { type: "malformed_chunk"; afterChunks: number }; // send a data line that is not JSON
}

/** An HTTP error with a real error body (see `test/fixtures/llm/*error*`). */
export interface FakeHttpError {
  kind: "error";
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** Raw bytes, e.g. a fixture replayed as-is (`contentType` defaults to SSE when `sse` is set). */
export interface FakeRaw {
  kind: "raw";
  status?: number;
  body: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Split the body into SSE events and send them with this delay between them. */
  eventDelayMs?: number;
}

/** Close the connection without any response (connection reset). */
export interface FakeHangUp {
  kind: "hangup";
}

export type FakeStep = FakeReply | FakeHttpError | FakeRaw | FakeHangUp;

export type FakeApi = "chat" | "responses" | "anthropic";

export interface RecordedRequest {
  api: FakeApi;
  method: string;
  path: string;
  /** The URL's query string (`?api-version=…`), when there was one. */
  query?: string;
  headers: Record<string, string>;
  /** Parsed JSON body. */
  body: Record<string, unknown>;
  stream: boolean;
  /** When the request arrived (epoch ms). */
  at: number;
}

export interface FakeLLMOptions {
  /** Steps queued before the first request (same as calling `enqueue` right away). */
  steps?: FakeStep[];
}

export interface FakeLLM {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** `http://127.0.0.1:PORT/v1` — for OpenAI clients. Anthropic clients use `url`. */
  readonly openaiBaseURL: string;
  readonly anthropicBaseURL: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** TCP connections accepted so far (a client that keeps its connection alive opens one). */
  readonly connections: number;
  /** Queue steps; each request consumes the next one. */
  enqueue(...steps: FakeStep[]): void;
  /** Steps not consumed yet. */
  pending(): number;
  /** Throws when a request arrived with no step queued, or steps are left over. */
  assertDone(): void;
  close(): Promise<void>;
}
