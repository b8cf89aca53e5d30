/**
 * The page: thread list (new, switch, rename, delete), the conversation, the composer with
 * send and stop, the current model and agent. State lives in the gateway's session store.
 */
import { api, setKeyPrompt } from "./api.js";
import type { Info, SessionEvent, ThreadInfo } from "./api.js";
import { closeElicitation, elicitationElement } from "./elicitation-form.js";
import { McpLoginBar } from "./mcp-logins.js";
import { TurnView, renderHistory, setUiActionHandler, userElement } from "./view.js";
import type { UiMessage, UiReply } from "./ui-resource.js";

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const messages = $<HTMLElement>("messages");
const input = $<HTMLTextAreaElement>("input");
const sendButton = $<HTMLButtonElement>("send");
const stopButton = $<HTMLButtonElement>("stop");
const threadList = $<HTMLUListElement>("threads");
const agentSelect = $<HTMLSelectElement>("agent");
const notice = $<HTMLDivElement>("notice");

let threads: ThreadInfo[] = [];
let busy = false;
/** Turns this page ran whose `turn_completed` has not come back on the event stream yet. */
let ownTurns = 0;

/** Notices that stay until the gateway stops reporting them (setup help, failed MCP servers). */
let standing: string[] = [];

/** Shows the standing notices plus, until the next action, `text` (an action's error). */
function showNotice(text: string | null): void {
  const lines = text ? [...standing, text] : standing;
  notice.hidden = lines.length === 0;
  notice.textContent = lines.join("\n");
}

const logins = new McpLoginBar($<HTMLDivElement>("mcp-logins"), (info) => applyInfo(info));

function applyInfo(info: Info): void {
  const pending = info.mcpLogins ?? [];
  standing = [info.setupHelp, ...logins.filterNotices(info.notices ?? [], pending)].filter((l): l is string => Boolean(l));
  logins.render(pending);
  showNotice(null);
}

/** A name the user gave, else the title from the first message; an empty thread is new. */
function threadLabel(t: ThreadInfo): string {
  return t.name ?? t.title ?? (t.messageCount > 0 ? `Thread ${new Date(t.createdAt).toLocaleString()}` : "New thread");
}

/** Narrow screens: the thread list is a drawer over the chat. */
function setSidebar(open: boolean): void {
  document.body.classList.toggle("sidebar-open", open);
  $("toggle-sidebar").setAttribute("aria-expanded", String(open));
}

/** The setup help and whatever the gateway reports as wrong (model, MCP servers). */
async function refreshNotices(): Promise<void> {
  applyInfo(await api.info());
}

async function refreshThreads(): Promise<void> {
  threads = (await api.threads()).threads;
  threadList.replaceChildren(
    ...[...threads].reverse().map((t) => {
      const li = document.createElement("li");
      li.className = t.current ? "current" : "";
      li.dataset.testid = "thread";
      li.dataset.threadId = t.id;
      const name = document.createElement("button");
      name.type = "button";
      name.className = "thread-name";
      name.textContent = threadLabel(t);
      name.title = threadLabel(t);
      name.onclick = () => {
        setSidebar(false);
        void guard(() => switchTo(t.id));
      };
      const rename = document.createElement("button");
      rename.type = "button";
      rename.title = "Rename";
      rename.textContent = "✎";
      rename.dataset.testid = "rename-thread";
      rename.onclick = () => void guard(() => renameThread(t));
      const del = document.createElement("button");
      del.type = "button";
      del.title = "Delete";
      del.textContent = "✕";
      del.dataset.testid = "delete-thread";
      del.onclick = () => void guard(() => deleteThread(t));
      li.append(name, rename, del);
      return li;
    }),
  );
  const current = threads.find((t) => t.current);
  $("thread-title").textContent = current ? threadLabel(current) : "New thread";
}

async function loadCurrent(): Promise<void> {
  await refreshThreads();
  const current = threads.find((t) => t.current);
  renderHistory(messages, current ? (await api.messages(current.id)).messages : []);
  messages.scrollTop = messages.scrollHeight;
}

async function switchTo(id: string): Promise<void> {
  if (busy) return;
  await api.switchThread(id);
  await loadCurrent();
}

async function renameThread(t: ThreadInfo): Promise<void> {
  const name = prompt("Thread name", t.name ?? "");
  if (name === null) return;
  await api.renameThread(t.id, name);
  await refreshThreads();
}

async function deleteThread(t: ThreadInfo): Promise<void> {
  if (!confirm(`Delete "${threadLabel(t)}" and its messages?`)) return;
  await api.deleteThread(t.id);
  await loadCurrent();
}

function setBusy(value: boolean): void {
  busy = value;
  sendButton.hidden = value;
  stopButton.hidden = !value;
  input.disabled = value;
}

async function send(): Promise<void> {
  const text = input.value.trim();
  if (!text || busy) return;
  input.value = "";
  await runTurn(text);
}

interface ToolOutcome {
  name: string;
  text: string;
  isError: boolean;
}

/** What a turn ended with, for an MCP-UI page that asked for it. */
interface TurnOutcome {
  content: string;
  error?: string;
  tools: ToolOutcome[];
}

async function runTurn(text: string): Promise<TurnOutcome> {
  const outcome: TurnOutcome = { content: "", tools: [] };
  ownTurns++;
  messages.append(userElement(text));
  const turn = new TurnView();
  turn.startThinking();
  messages.append(turn.root);
  setBusy(true);
  const follow = (): void => void (messages.scrollTop = messages.scrollHeight);
  try {
    await api.chat(text, agentSelect.value, (e) => {
      if (e.type === "text") turn.addText(e.delta);
      else if (e.type === "reasoning") turn.addReasoning(e.delta);
      else if (e.type === "tool_call") turn.addTool(e.call);
      else if (e.type === "tool_result") {
        turn.toolResult(e.toolCallId, e.text, e.isError, e.ui);
        outcome.tools.push({ name: e.name, text: e.text, isError: e.isError });
        // The model is called again with the result: waiting until it answers.
        turn.startThinking();
      }
      else if (e.type === "warning") turn.warn(e.message);
      else if (e.type === "retrying") {
        turn.warn(e.message);
        turn.startThinking();
      }
      else if (e.type === "done") {
        outcome.content = e.content;
        if (e.error) outcome.error = e.error;
        if (e.replayed) turn.replaceAnswer(e.content);
        else turn.finish(e.content);
        if (e.stopReason === "aborted") turn.note("Stopped.", "stopped");
        else if (e.error) turn.note(e.error, "error");
      } else if (e.type === "elicitation") turn.root.append(elicitationElement(e));
      else if (e.type === "elicitation_end") closeElicitation(turn.root, e.id, e.action);
      else {
        outcome.error = e.message;
        turn.note(e.message, "error");
      }
      follow();
    });
  } catch (err) {
    outcome.error = err instanceof Error ? err.message : String(err);
    turn.note(outcome.error, "error");
  } finally {
    setBusy(false);
    input.focus();
  }
  await refreshThreads();
  // The first turn connects the MCP servers: one that failed is reported now.
  await refreshNotices();
  return outcome;
}

function openLink(url: unknown): UiReply {
  if (typeof url !== "string" || !/^https?:\/\//i.test(url)) return { error: "only http(s) links are opened" };
  window.open(url, "_blank", "noopener,noreferrer");
  return { response: { opened: url } };
}

/**
 * A message from an MCP-UI page: a link opens in a new tab; anything else is sent as the
 * action JSON, as the Go nanobot's UI sends it, and the gateway's turn decides (a tool action
 * runs the tool without the model, a prompt action becomes the prompt's text). A tool action's
 * page gets the tool's result back.
 */
async function onUiAction(message: UiMessage): Promise<UiReply> {
  const { type, payload } = message;
  if (type === "link") return openLink(payload.url);
  if (type === "intent" && payload.intent === "link") {
    const params = payload.params as Record<string, unknown> | undefined;
    return openLink(params?.url);
  }
  if (busy) return { error: "a turn is running; try again when it has finished" };
  const outcome = await runTurn(JSON.stringify({ type, payload }));
  if (outcome.error) return { error: outcome.error };
  const tool = type === "tool" ? outcome.tools.at(-1) : undefined;
  if (tool) return tool.isError ? { error: tool.text } : { response: { text: tool.text } };
  return { response: { text: outcome.content } };
}
setUiActionHandler(onUiAction);

/** Errors from any action show inline in the notice bar instead of disappearing. */
async function guard(action: () => Promise<void>): Promise<void> {
  try {
    showNotice(null);
    await action();
  } catch (err) {
    showNotice(err instanceof Error ? err.message : String(err));
  }
}

function keyPrompt(): Promise<string> {
  const dialog = $<HTMLDialogElement>("key-dialog");
  const field = $<HTMLInputElement>("key-input");
  return new Promise((resolve) => {
    $<HTMLFormElement>("key-form").onsubmit = () => resolve(field.value.trim());
    dialog.showModal();
  });
}

/**
 * A turn of this session that another tab, client or gateway worker ran: its messages are in
 * the store, so the current thread is reloaded (not while this page runs a turn of its own).
 */
function onSessionEvent(e: SessionEvent): void {
  if (e.type === "turn_completed" && e.channel === "web" && ownTurns > 0) {
    ownTurns--;
    return;
  }
  if (busy) return;
  void guard(loadCurrent);
}

async function start(): Promise<void> {
  setKeyPrompt(keyPrompt);
  const info = await api.info();
  agentSelect.replaceChildren(...info.agents.map((a) => new Option(a, a)));
  $("model").textContent = info.model ?? "no model";
  applyInfo(info);
  await loadCurrent();
  void api.follow(onSessionEvent);
}

$<HTMLFormElement>("composer").onsubmit = (ev) => {
  ev.preventDefault();
  void guard(send);
};
input.onkeydown = (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    void guard(send);
  }
};
stopButton.onclick = () => void guard(async () => void (await api.stop()));
$("toggle-sidebar").onclick = () => setSidebar(!document.body.classList.contains("sidebar-open"));
$("scrim").onclick = () => setSidebar(false);
$("new-thread").onclick = () =>
  void guard(async () => {
    setSidebar(false);
    if (busy) return;
    await api.newThread();
    // The new thread is empty: clear the view now, not after the list and history reload.
    renderHistory(messages, []);
    await loadCurrent();
  });

void guard(start);
