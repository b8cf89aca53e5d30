/**
 * The logins waiting for their browser redirect, by OAuth `state`, and the page the browser gets
 * back. Shared by the CLI's loopback listener and the gateway's callback route: a redirect whose
 * `state` nobody waits for is refused (a stale tab, or a forged link), a redirect carrying an
 * `error` fails its login with the authorization server's reason.
 */

export interface RedirectAnswer {
  status: 200 | 400;
  html: string;
}

interface Waiter {
  resolve(code: string): void;
  reject(err: Error): void;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function redirectPage(title: string, text: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
}

export class RedirectWaiters {
  private readonly waiting = new Map<string, Waiter>();

  /**
   * Resolves with the code of the redirect carrying `state`. A `null` state (an authorization
   * server that sends none) matches the next redirect without one, so only one may wait.
   */
  wait(state: string | null): Promise<string> {
    const key = state ?? "";
    this.waiting.get(key)?.reject(new Error("superseded by a newer authorization"));
    return new Promise((resolve, reject) => {
      this.waiting.set(key, { resolve, reject });
    });
  }

  /** Whether any login is waiting. */
  get size(): number {
    return this.waiting.size;
  }

  /** Settles the login the redirect belongs to and says what the browser should show. */
  answer(params: URLSearchParams, done = "You can close this tab."): RedirectAnswer {
    // A login that sent no state takes whatever redirect comes (nothing to check it against).
    const key = this.waiting.has(params.get("state") ?? "") ? (params.get("state") ?? "") : "";
    const waiter = this.waiting.get(key);
    if (!waiter) return { status: 400, html: redirectPage("Not expected", "This redirect does not belong to a login nanobot is waiting for.") };
    this.waiting.delete(key);
    const error = params.get("error");
    const code = params.get("code");
    if (error || !code) {
      const description = params.get("error_description");
      const reason = `${error ?? "no code"}${description ? `: ${description}` : ""}`;
      waiter.reject(new Error(`the authorization server refused: ${reason}`));
      return { status: 400, html: redirectPage("Authorization failed", reason) };
    }
    waiter.resolve(code);
    return { status: 200, html: redirectPage("nanobot is authorized", done) };
  }

  /** Fails every waiting login (the listener or the gateway is going away). */
  cancelAll(reason: string): void {
    for (const waiter of this.waiting.values()) waiter.reject(new Error(reason));
    this.waiting.clear();
  }

  /** Forgets one state without settling it (its login gave up). */
  forget(state: string | null): void {
    this.waiting.delete(state ?? "");
  }
}
