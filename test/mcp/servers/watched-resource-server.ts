/**
 * A stdio MCP server with one resource, `memo://note`, that supports subscriptions: a
 * subscription makes the note change once, 100 ms later, with no call running — the way a file,
 * a ticket or a price changes on its own — and the server reports it with
 * `notifications/resources/updated`.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ListResourcesRequestSchema, ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";

export const NOTE_URI = "memo://note";

let note = "first draft";
const server = new Server({ name: "memo", version: "1.0.0" }, { capabilities: { resources: { subscribe: true } } });
server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: NOTE_URI, name: "note", mimeType: "text/plain" }] }));
server.setRequestHandler(ReadResourceRequestSchema, (request) => ({ contents: [{ uri: request.params.uri, mimeType: "text/plain", text: note }] }));
server.setRequestHandler(SubscribeRequestSchema, (request) => {
  const { uri } = request.params;
  setTimeout(() => {
    note = "second draft";
    void server.sendResourceUpdated({ uri });
  }, 100);
  return {};
});
server.setRequestHandler(UnsubscribeRequestSchema, () => ({}));
await server.connect(new StdioServerTransport());
