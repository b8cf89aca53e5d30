/**
 * JSON-RPC errors leave nanobot's MCP server with their bare text: the code travels in `code`,
 * and the client's SDK writes "MCP error <code>: " in front of the text itself. Without this,
 * an `McpError` thrown by a handler reaches the user as "MCP error -32602: MCP error -32602: …".
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { withoutMcpErrorPrefix } from "../../mcp/error-text.js";

function bareError(message: JSONRPCMessage): JSONRPCMessage {
  if (!("error" in message)) return message;
  const text = withoutMcpErrorPrefix(message.error.message);
  return text === message.error.message ? message : { ...message, error: { ...message.error, message: text } };
}

/** Makes every transport `server` connects to send bare error texts. */
export function sendBareErrors(server: Server): void {
  const connect = server.connect.bind(server);
  server.connect = (transport: Transport): Promise<void> => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(bareError(message), options);
    return connect(transport);
  };
}
