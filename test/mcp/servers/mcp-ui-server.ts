/**
 * A small shop as a stdio MCP server that answers with MCP-UI resources: `show_cart` returns a
 * `ui://shop/cart` HTML page whose buttons post MCP-UI actions (`tool`, `prompt`, `link`) to
 * the host and show the host's response; `show_widget` returns a remote-dom component
 * (`application/vnd.mcp-ui.remote-dom+javascript`); `add_item` changes the cart; `recipe` is a prompt.
 * The cart lives in this process, so a test can see that a tool really ran. Run with
 * `node --import tsx`.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const cart: string[] = [];

/** The page posts `{type, payload, messageId}` and writes the host's answer into #response. */
function cartPage(): string {
  const items = cart.length === 0 ? "<li>(empty)</li>" : cart.map((i) => `<li>${i}</li>`).join("");
  return `<!doctype html><html><body style="font-family:sans-serif">
<h3>Cart</h3><ul id="items">${items}</ul>
<button id="add" onclick="send('tool', {toolName: 'add_item', params: {item: 'apple'}})">Add apple</button>
<button id="ask" onclick="send('prompt', {prompt: 'Suggest a recipe with apples'})">Ask for a recipe</button>
<button id="link" onclick="send('link', {url: 'https://example.com/shop'})">Shop site</button>
<pre id="response"></pre>
<pre id="origin"></pre>
<script>
  let next = 1;
  function send(type, payload) {
    window.parent.postMessage({ type, payload, messageId: 'm' + next++ }, '*');
  }
  window.addEventListener('message', (e) => {
    const d = e.data || {};
    if (d.type === 'ui-message-response') {
      document.getElementById('response').textContent = JSON.stringify(d.payload);
    }
  });
  // A sandbox without allow-same-origin gives this page an opaque origin: no cookies, no parent DOM.
  let parentDom = 'blocked';
  try { parentDom = window.parent.document.title; } catch (_) {}
  document.getElementById('origin').textContent = 'origin=' + window.origin + ' parent=' + parentDom;
  window.parent.postMessage({ type: 'ui-size-change', payload: { height: document.documentElement.scrollHeight } }, '*');
</script></body></html>`;
}

const anyObject = { type: "object" as const, properties: {}, additionalProperties: true };

const TOOLS = [
  { name: "show_cart", description: "Shows the shopping cart as an interactive page", inputSchema: anyObject },
  { name: "show_widget", description: "Shows the cart as a remote-dom component", inputSchema: anyObject },
  {
    name: "add_item",
    description: "Adds an item to the cart",
    inputSchema: { type: "object" as const, properties: { item: { type: "string" } }, required: ["item"] },
  },
];

function handle(name: string, args: Record<string, unknown>): CallToolResult {
  if (name === "show_cart") {
    return {
      content: [
        { type: "text", text: `The cart has ${cart.length} item(s).` },
        { type: "resource", resource: { uri: "ui://shop/cart", mimeType: "text/html", text: cartPage() } },
      ],
    };
  }
  if (name === "show_widget") {
    const script = "const p = document.createElement('ui-text'); p.textContent = 'cart widget'; root.appendChild(p);";
    return {
      content: [
        { type: "text", text: "The cart widget." },
        { type: "resource", resource: { uri: "ui://shop/widget", mimeType: "application/vnd.mcp-ui.remote-dom+javascript; framework=react", text: script } },
      ],
    };
  }
  if (name === "add_item") {
    const item = typeof args.item === "string" ? args.item : "";
    if (!item) return { isError: true, content: [{ type: "text", text: "item is required" }] };
    cart.push(item);
    return { content: [{ type: "text", text: `Added ${item}; the cart has ${cart.length} item(s): ${cart.join(", ")}.` }] };
  }
  return { isError: true, content: [{ type: "text", text: `unknown tool ${name}` }] };
}

const server = new Server({ name: "shop", version: "1.0.0" }, { capabilities: { tools: {}, prompts: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
server.setRequestHandler(CallToolRequestSchema, (req) => handle(req.params.name, req.params.arguments ?? {}));
server.setRequestHandler(ListPromptsRequestSchema, () => ({
  prompts: [{ name: "recipe", description: "Asks for a recipe", arguments: [{ name: "fruit", required: true }] }],
}));
server.setRequestHandler(GetPromptRequestSchema, (req) => {
  if (req.params.name !== "recipe") throw new Error(`unknown prompt ${req.params.name}`);
  const fruit = req.params.arguments?.fruit ?? "fruit";
  return { messages: [{ role: "user", content: { type: "text", text: `Write a short recipe that uses ${fruit}.` } }] };
});

await server.connect(new StdioServerTransport());
