/**
 * A TCP proxy (node:net) between the workers and PostgreSQL, standing in for the network: `cut`
 * drops every connection through it at once (both sides see a reset), and while `refusing` it
 * accepts nothing (each new connection is reset at once), as a partitioned network would.
 */
import { createConnection, createServer } from "node:net";
import type { AddressInfo, Socket } from "node:net";

export interface TcpProxy {
  /** `host:port` to put in a URL instead of the real server's. */
  address: string;
  /** Connections open through the proxy now. */
  open(): number;
  /** Connections accepted since the start (refused ones included). */
  accepted(): number;
  /** Resets every open connection; with `refuseMs`, new ones are reset too for that long. */
  cut(refuseMs?: number): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let refuseUntil = 0;
  let accepted = 0;
  const server = createServer((client) => {
    accepted++;
    if (Date.now() < refuseUntil) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection(target);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      if (!client.destroyed) client.resetAndDestroy();
      if (!upstream.destroyed) upstream.resetAndDestroy();
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    open: () => pairs.size,
    accepted: () => accepted,
    cut(refuseMs = 0) {
      refuseUntil = Date.now() + refuseMs;
      for (const [client, upstream] of [...pairs]) {
        client.resetAndDestroy();
        upstream.resetAndDestroy();
      }
      pairs.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [client, upstream] of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
