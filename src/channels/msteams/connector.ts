/**
 * Bot Connector clients: botframework-connector's `ConnectorClient` (REST v3) for one
 * serviceUrl. The client's own retry policy is removed so every retry (5xx, 429, network) is
 * the delivery queue's, counted against `sendMaxRetries`.
 */
import { ConnectorClient } from "botframework-connector";
import type { ClientSecretCredentials } from "./credentials.js";

interface PipelineOwner {
  client?: { pipeline?: { removePolicy(options: { phase: string }): unknown } };
}

/** A connector for one serviceUrl; plain `http:` is accepted only for loopback (test servers). */
export function createConnector(credentials: ClientSecretCredentials, serviceUrl: string): ConnectorClient {
  const connector = new ConnectorClient(credentials, { baseUri: serviceUrl.replace(/\/+$/, "") });
  // The compat layer keeps its core-client ServiceClient private; its pipeline's Retry phase
  // would otherwise retry 5xx three times with its own real-time waits.
  (connector as unknown as PipelineOwner).client?.pipeline?.removePolicy({ phase: "Retry" });
  return connector;
}

