/**
 * The notice bar's MCP logins: a remote MCP server that needs OAuth gets a "Log in" button. The
 * gateway starts the login and answers the authorization server's URL, which opens in a new tab
 * (and stays as a link, for browsers that block the pop-up). The authorization server sends the
 * browser back to the gateway, which stores the tokens and connects the server; this bar
 * notices by asking the gateway again until the server no longer waits.
 */
import { api } from "./api.js";
import type { Info } from "./api.js";

type Pending = NonNullable<Info["mcpLogins"]>[number];

const POLL_MS = 1500;
const GIVE_UP_MS = 10 * 60_000;

export class McpLoginBar {
  /** Servers whose login link was handed out, so a re-render keeps it. */
  private readonly links = new Map<string, string>();
  private polling = false;

  constructor(
    private readonly root: HTMLElement,
    /** Applies fresh gateway info (notices, this bar) when a login finishes. */
    private readonly refresh: (info: Info) => void,
  ) {}

  /** Notices about servers this bar offers a login for are said by the bar instead. */
  filterNotices(notices: string[], pending: Pending[]): string[] {
    return notices.filter((n) => !pending.some((p) => n.startsWith(`MCP server ${p.server} `)));
  }

  render(pending: Pending[]): void {
    for (const server of [...this.links.keys()]) if (!pending.some((p) => p.server === server)) this.links.delete(server);
    this.root.hidden = pending.length === 0;
    this.root.replaceChildren(...pending.map((p) => this.row(p)));
  }

  private row({ server, lastError }: Pending): HTMLElement {
    const row = document.createElement("div");
    row.className = "mcp-login";
    row.dataset.testid = "mcp-login";
    const text = document.createElement("span");
    text.textContent = lastError ? `MCP server ${server}: the last login failed (${lastError}).` : `MCP server ${server} needs you to log in.`;
    row.append(text);
    const link = this.links.get(server);
    if (link) {
      const a = document.createElement("a");
      a.href = link;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      a.dataset.testid = "mcp-login-link";
      a.textContent = `Open the ${server} login page`;
      row.append(" ", a, " — waiting for you to finish there…");
      return row;
    }
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.testid = "mcp-login-button";
    button.textContent = `Log in to ${server}`;
    button.onclick = () => void this.start(server, button, text);
    row.append(" ", button);
    return row;
  }

  private async start(server: string, button: HTMLButtonElement, text: HTMLElement): Promise<void> {
    button.disabled = true;
    try {
      const answer = await api.mcpLogin(server);
      if (answer.authorizationUrl) {
        this.links.set(server, answer.authorizationUrl);
        window.open(answer.authorizationUrl, "_blank", "noopener,noreferrer");
      }
      this.refresh(await api.info());
      void this.pollUntilDone();
    } catch (err) {
      button.disabled = false;
      text.textContent = `MCP server ${server}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /** Asks the gateway again until no handed-out login is still waiting (or 10 minutes pass). */
  private async pollUntilDone(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    const until = Date.now() + GIVE_UP_MS;
    try {
      while (this.links.size > 0 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, POLL_MS));
        this.refresh(await api.info());
      }
    } finally {
      this.polling = false;
    }
  }
}
