/**
 * One HTTP GET whose connection can only go to addresses the SSRF guard checked.
 *
 * `fetch()` resolves the host name again when it connects, so a name that answered a public
 * address to the check can answer 127.0.0.1 to the connection (DNS rebinding). Here the socket
 * gets a `lookup` function pinned to the checked addresses: DNS is not asked again, and each
 * address is re-checked as it is handed out (a second guard, not the first). TLS still
 * verifies the certificate against the host name (`servername`), and the Host header is the
 * URL's. The result is a standard `Response` so callers read it like a fetch result.
 */
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { pipeline, Readable } from "node:stream";

/** Why an address may not be used, or undefined when it may (SsrfGuard.checkAddress). */
export type AddressCheck = (address: string) => string | undefined;

export interface PinnedTarget {
  url: URL;
  /** The addresses the check passed; the only ones the connection may use. */
  addresses: readonly string[];
}

function familyOf(address: string): 4 | 6 {
  return isIP(address) === 6 ? 6 : 4;
}

function wantedFamily(family: unknown): 4 | 6 | undefined {
  if (family === 4 || family === "IPv4") return 4;
  if (family === 6 || family === "IPv6") return 6;
  return undefined;
}

/** A `lookup` for net/tls that answers only with checked addresses for the checked host. */
export function pinnedLookup(hostname: string, addresses: readonly string[], check: AddressCheck): LookupFunction {
  return (host, options, callback) => {
    const family = wantedFamily((options as { family?: unknown }).family);
    const usable = addresses.filter((address) => (!family || familyOf(address) === family) && !check(address));
    if (host !== hostname || usable.length === 0) {
      const why = host !== hostname ? `${host} is not the checked host ${hostname}` : `no checked address for ${host}`;
      callback(Object.assign(new Error(`connection refused by SSRF pinning: ${why}`), { code: "ENOTFOUND" }), "", 4);
      return;
    }
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (err: null, all: Array<{ address: string; family: number }>) => void)(
        null,
        usable.map((address) => ({ address, family: familyOf(address) })),
      );
      return;
    }
    const first = usable[0] as string;
    callback(null, first, familyOf(first));
  };
}

function decoded(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "").trim().toLowerCase();
  const decoder = encoding === "gzip" || encoding === "x-gzip" ? createGunzip() : encoding === "br" ? createBrotliDecompress() : encoding === "deflate" ? createInflate() : undefined;
  if (!decoder) return res;
  // pipeline destroys both ends when either fails or is cancelled (a capped read closes the socket).
  pipeline(res, decoder, () => undefined);
  return decoder;
}

function toResponse(res: http.IncomingMessage): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    try {
      headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
    } catch {
      // A header value fetch would reject too; the rest of the response is still usable.
    }
  }
  const nullBody = status === 204 || status === 205 || status === 304;
  if (nullBody) res.resume();
  const body = nullBody ? null : (Readable.toWeb(decoded(res)) as ReadableStream<Uint8Array>);
  try {
    return new Response(body, { status, statusText: res.statusMessage ?? "", headers });
  } catch {
    return new Response(body, { status, headers });
  }
}

/** GET `target.url` over a connection pinned to `target.addresses`. */
export function pinnedGet(target: PinnedTarget, headers: Record<string, string>, signal: AbortSignal, check: AddressCheck, ca?: string): Promise<Response> {
  const { url } = target;
  const secure = url.protocol === "https:";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const literal = isIP(host) !== 0;
  const options: https.RequestOptions = {
    method: "GET",
    host,
    port: url.port || (secure ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, host: url.host, "accept-encoding": "gzip, br" },
    signal,
    agent: false,
    // A literal address was itself the thing checked; a name connects through the pinned lookup.
    ...(literal ? {} : { lookup: pinnedLookup(host, target.addresses, check) }),
    ...(secure && !literal ? { servername: host } : {}),
    ...(secure && ca ? { ca } : {}),
  };
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(options, (res) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 599) {
        res.destroy();
        reject(new Error(`unexpected HTTP status ${status}`));
        return;
      }
      resolve(toResponse(res));
    });
    req.on("error", reject);
    req.end();
  });
}
