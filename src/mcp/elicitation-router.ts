/**
 * Routes a server's elicitation request to the user of the turn that caused it. The request
 * arrives on the connection's read loop, not inside the tool call, so the connection reports
 * which sessions have a tool call in flight on that server (`callers`); a face that can ask
 * (web UI, interactive CLI) registers an asker for its session while its turn runs.
 *
 * When nobody can be asked, `mcp.elicitation` decides: "decline" (the default; an ordinary
 * answer every server must handle) or "defaults" (accept with the form's defaults when every
 * required field has one, else decline). Nobody can be asked when: no call is in flight, the
 * caller's face cannot ask (`agent -m`, chat channels, cron, sub-agents), or calls of several
 * sessions are in flight on the server at once (we cannot tell whose request it is, and must
 * not show one user's form to another). The answer is checked against the schema before it leaves.
 */
import { errorMessage } from "../core/errors.js";
import { defaultContent, describeProblems, validateElicitationContent } from "./elicitation-schema.js";
import type { ElicitationRequest, ElicitationResponse, McpLogFn } from "./types.js";

/** How long the user has to answer before the request is cancelled. */
export const ELICITATION_TIMEOUT_MS = 5 * 60 * 1000;

/**
 * Asks the user and resolves with their answer. `signal` aborts on timeout, when the server
 * gives up, or when the turn ends; the asker should then take its question down.
 */
export type ElicitationAsker = (request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationResponse>;

/** What to answer when nobody can be asked (`mcp.elicitation`). */
export type UnattendedElicitation = "decline" | "defaults";

export interface ElicitationRouterOptions {
  timeoutMs?: number;
  /** Default "decline". */
  unattended?: UnattendedElicitation;
  log?: McpLogFn;
}

interface Registration {
  asker: ElicitationAsker;
  /** Aborted when the registration ends, so a question left open is taken down. */
  ended: AbortController;
}

const DECLINE: ElicitationResponse = { action: "decline" };
const CANCEL: ElicitationResponse = { action: "cancel" };

export class ElicitationRouter {
  private readonly askers = new Map<string, Registration[]>();
  private readonly timeoutMs: number;

  constructor(private readonly options: ElicitationRouterOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? ELICITATION_TIMEOUT_MS;
  }

  /** Lets `sessionKey`'s user be asked until the returned function is called (end of the turn). */
  register(sessionKey: string, asker: ElicitationAsker): () => void {
    const registration: Registration = { asker, ended: new AbortController() };
    const list = this.askers.get(sessionKey) ?? [];
    list.push(registration);
    this.askers.set(sessionKey, list);
    return () => {
      registration.ended.abort(new Error("the turn ended"));
      const current = this.askers.get(sessionKey)?.filter((r) => r !== registration) ?? [];
      if (current.length > 0) this.askers.set(sessionKey, current);
      else this.askers.delete(sessionKey);
    };
  }

  /** Whether `sessionKey` has a face that can ask right now. */
  canAsk(sessionKey: string): boolean {
    return (this.askers.get(sessionKey)?.length ?? 0) > 0;
  }

  /** The `ElicitationHandler` the MCP manager calls. */
  readonly handle = async (request: ElicitationRequest, signal: AbortSignal): Promise<ElicitationResponse> => {
    const callers = [...new Set(request.callers ?? [])];
    const log = this.options.log;
    if (callers.length !== 1) {
      return this.unattended(request, {
        reason: callers.length === 0 ? "no tool call of a session is in flight on this server" : "calls of several sessions are in flight",
      });
    }
    const sessionKey = callers[0] ?? "";
    // The newest registration wins: a session's latest turn is the one on screen.
    const registration = this.askers.get(sessionKey)?.at(-1);
    if (!registration) return this.unattended(request, { sessionKey, reason: "this session's channel cannot ask" });
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = AbortSignal.any([signal, timeout, registration.ended.signal]);
    try {
      const answer = await registration.asker(request, combined);
      if (combined.aborted) return CANCEL;
      return this.checked(request, answer);
    } catch (err) {
      if (!combined.aborted) log?.("warn", "MCP elicitation failed", { server: request.server, sessionKey, error: errorMessage(err) });
      return CANCEL;
    }
  };

  /** The answer when nobody can be asked: decline, or the form's defaults under "defaults". */
  private unattended(request: ElicitationRequest, why: { reason: string; sessionKey?: string }): ElicitationResponse {
    const log = this.options.log;
    if (this.options.unattended === "defaults" && request.mode === "form") {
      const content = defaultContent(request.requestedSchema);
      if (content) {
        log?.("info", "MCP elicitation accepted with the form's defaults", { server: request.server, ...why });
        return { action: "accept", content };
      }
      log?.("info", "MCP elicitation declined", { server: request.server, ...why, defaults: "a required field has no default" });
      return DECLINE;
    }
    log?.("info", "MCP elicitation declined", { server: request.server, ...why });
    return DECLINE;
  }

  /** A form answer that does not fit the schema never reaches the server. */
  private checked(request: ElicitationRequest, answer: ElicitationResponse): ElicitationResponse {
    if (answer.action !== "accept") return { action: answer.action };
    if (request.mode === "url") return { action: "accept" };
    const content = answer.content ?? {};
    const problems = validateElicitationContent(request.requestedSchema, content);
    if (problems.length === 0) return { action: "accept", content };
    this.options.log?.("warn", "MCP elicitation answer does not fit the form; cancelled", { server: request.server, problems: describeProblems(problems) });
    return CANCEL;
  }
}
