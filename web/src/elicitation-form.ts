/**
 * An MCP server's question inside the live turn: a small form built from the fields the gateway
 * sent (text, number, yes/no, one or several options) with Accept / Decline / Cancel, or for a
 * URL request the link to visit. The gateway checks the answer; its refusal shows under the form
 * and the form stays open. `elicitation_end` (answered, timed out, turn over) closes it.
 */
import { api } from "./api.js";
import type { ElicitAction, ElicitField, ElicitValue, ElicitationEvent } from "./api.js";

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const INPUT_TYPES = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" } as const;

/** One field's input(s); `read` returns the value, or undefined when left empty. */
function fieldInput(field: ElicitField): { node: HTMLElement; read: () => ElicitValue | undefined } {
  if (field.kind === "boolean") {
    const box = el("input");
    box.type = "checkbox";
    box.checked = field.default ?? false;
    return { node: box, read: () => box.checked };
  }
  if (field.kind === "select") {
    const select = el("select");
    if (!field.required || field.default === undefined) select.append(new Option("—", ""));
    for (const o of field.options) select.append(new Option(o.label, o.value, false, o.value === field.default));
    return { node: select, read: () => select.value || undefined };
  }
  if (field.kind === "multiselect") {
    const group = el("span", "elicit-choices");
    const boxes = field.options.map((o) => {
      const box = el("input");
      box.type = "checkbox";
      box.value = o.value;
      box.checked = field.default?.includes(o.value) ?? false;
      const label = el("label");
      label.append(box, ` ${o.label}`);
      group.append(label);
      return box;
    });
    return {
      node: group,
      read: () => {
        const picked = boxes.filter((b) => b.checked).map((b) => b.value);
        return picked.length > 0 ? picked : undefined;
      },
    };
  }
  const input = el("input");
  if (field.kind === "string") {
    input.type = field.format ? INPUT_TYPES[field.format] : "text";
    if (field.default !== undefined) input.value = field.default;
    // datetime-local has no zone; the spec's date-time (RFC 3339) needs one.
    const read = (): string | undefined => (!input.value ? undefined : field.format === "date-time" ? new Date(input.value).toISOString() : input.value);
    return { node: input, read };
  }
  input.type = "number";
  input.step = field.kind === "integer" ? "1" : "any";
  if (field.minimum !== undefined) input.min = String(field.minimum);
  if (field.maximum !== undefined) input.max = String(field.maximum);
  if (field.default !== undefined) input.value = String(field.default);
  return { node: input, read: () => (input.value === "" ? undefined : Number(input.value)) };
}

function buttons(send: (action: ElicitAction) => void, acceptText = "Accept"): HTMLElement {
  const row = el("div", "elicit-actions");
  const make = (action: ElicitAction, text: string, type: "submit" | "button"): HTMLButtonElement => {
    const b = el("button", `elicit-${action}`, text);
    b.type = type;
    b.dataset.testid = `elicit-${action}`;
    if (type === "button") b.onclick = () => send(action);
    return b;
  };
  row.append(make("accept", acceptText, "submit"), make("decline", "Decline", "button"), make("cancel", "Cancel", "button"));
  return row;
}

/** The question as an element to append to the live turn. */
export function elicitationElement(event: ElicitationEvent): HTMLElement {
  const form = el("form", "elicitation");
  form.noValidate = true; // the gateway checks the answer and says what is wrong
  form.dataset.testid = "elicitation";
  form.dataset.elicitationId = event.id;
  form.append(el("div", "elicit-server", `${event.server} asks`), el("p", "elicit-message", event.message));
  const error = el("div", "elicit-error");
  error.dataset.testid = "elicit-error";
  error.hidden = true;

  const readers: [string, () => ElicitValue | undefined][] = [];
  if (event.mode === "url" && event.url) {
    const link = el("a", "elicit-url", event.url);
    link.href = event.url;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    link.dataset.testid = "elicit-url";
    form.append(link);
  }
  for (const field of event.fields ?? []) {
    const row = el("label", "elicit-field");
    const { node, read } = fieldInput(field);
    node.dataset.field = field.name;
    node.dataset.testid = "elicit-field";
    row.append(el("span", "elicit-label", `${field.label}${field.required ? " *" : ""}`), node);
    if (field.description) row.append(el("small", "elicit-help", field.description));
    form.append(row);
    readers.push([field.name, read]);
  }

  const send = (action: ElicitAction): void => {
    let content: Record<string, ElicitValue> | undefined;
    if (action === "accept" && event.mode === "form") {
      content = {};
      for (const [name, read] of readers) {
        const value = read();
        if (value !== undefined) content[name] = value;
      }
    }
    if (action === "accept" && event.mode === "url" && event.url) window.open(event.url, "_blank", "noopener,noreferrer");
    error.hidden = true;
    api.answerElicitation(event.id, action, content).catch((err: unknown) => {
      error.textContent = err instanceof Error ? err.message : String(err);
      error.hidden = false;
    });
  };
  form.onsubmit = (ev) => {
    ev.preventDefault();
    send("accept");
  };
  form.append(buttons(send, event.mode === "url" ? "Open link" : "Accept"), error);
  return form;
}

const OUTCOME: Record<ElicitAction, string> = { accept: "Answered.", decline: "Declined.", cancel: "Cancelled." };

/** Takes a question down once it is settled (answered here, timed out, or its turn ended). */
export function closeElicitation(root: HTMLElement, id: string, action: ElicitAction): void {
  const form = root.querySelector<HTMLFormElement>(`[data-elicitation-id="${CSS.escape(id)}"]`);
  if (!form) return;
  form.dataset.state = action;
  for (const control of form.querySelectorAll<HTMLInputElement | HTMLButtonElement | HTMLSelectElement>("input, button, select")) control.disabled = true;
  form.querySelector(".elicit-actions")?.replaceChildren(el("span", "elicit-outcome", OUTCOME[action]));
  form.querySelector<HTMLElement>(".elicit-error")?.setAttribute("hidden", "");
}
