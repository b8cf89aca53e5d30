import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools, type BuiltinToolsOptions } from "../../src/tools/builtin/index.js";
import { SsrfGuard, type ResolveHost } from "../../src/tools/builtin/ssrf-guard.js";
import { createWebFetchTool } from "../../src/tools/builtin/web-fetch.js";
import { minimalPdf } from "./fixtures/minimal-pdf.js";
import { byName, ctxFor, runTool } from "./helpers.js";

const ARTICLE = `<!doctype html><html><head><title>Test Article</title><script>var tracking = "SCRIPT_TEXT";</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Test Article</h1>
<p>The first paragraph explains the <strong>important</strong> finding of this article in enough words to count as content for the readability scorer, which wants a few hundred characters.</p>
<p>The second paragraph adds more detail, including a <a href="https://example.com/ref">reference link</a>, so that the extracted article is clearly the main content of the page and not the navigation.</p>
<p>A third paragraph closes the article with a summary sentence that repeats the key point once more for good measure and length.</p>
</article><footer>Footer text</footer></body></html>`;

let server: Server;
/** The same handler on 127.0.0.2 and the same port: the "public" host of the DNS seams below. */
let publicServer: Server;
let base: string;
let port: number;
let hits: string[];
let publicHits: string[];
let aborted: Promise<boolean>;

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? "/";
  (req.socket.localAddress === "127.0.0.2" ? publicHits : hits).push(url);
  if (url === "/article") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE);
  } else if (url === "/redirect") {
    res.writeHead(302, { location: "/article" }).end();
  } else if (url === "/redirect-local") {
    res.writeHead(301, { location: `http://127.0.0.1:${port}/article` }).end();
  } else if (url === "/redirect-other") {
    res.writeHead(302, { location: `http://other.test:${port}/article` }).end();
  } else if (url === "/redirect-private") {
    res.writeHead(302, { location: "http://10.0.0.1/admin" }).end();
  } else if (url === "/loop") {
    res.writeHead(302, { location: "/loop" }).end();
  } else if (url === "/gzip") {
    res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end(gzipSync("compressed body text"));
  } else if (url === "/json") {
    res.writeHead(200, { "content-type": "application/json" }).end('{"a":1,"b":[true]}');
  } else if (url === "/long") {
    res.writeHead(200, { "content-type": "text/plain" }).end("z".repeat(10_000));
  } else if (url === "/pdf") {
    res.writeHead(200, { "content-type": "application/pdf" }).end(minimalPdf("PDF over HTTP"));
  } else if (url === "/png") {
    res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  } else if (url === "/missing") {
    res.writeHead(404, { "content-type": "text/plain" }).end("no such page");
  } else if (url === "/endless") {
    res.writeHead(200, { "content-type": "text/plain" });
    const chunk = "e".repeat(64 * 1024);
    aborted = new Promise((resolve) => res.on("close", () => resolve(!res.writableFinished)));
    const pump = (): void => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once("drain", pump);
    };
    pump();
  } else if (url === "/hang") {
    // Never answers; the client's deadline must end the call.
  } else {
    res.writeHead(500).end();
  }
}

beforeEach(async () => {
  hits = [];
  publicHits = [];
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  publicServer = createServer(handle);
  await new Promise<void>((resolve) => publicServer.listen(port, "127.0.0.2", resolve));
});
afterEach(async () => {
  for (const s of [server, publicServer]) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

function webFetch(options: Partial<BuiltinToolsOptions> = {}) {
  const tools = createBuiltinTools({ workspace: "/tmp", ssrfWhitelist: ["127.0.0.1/32"], ...options });
  const tool = byName(tools, "web_fetch");
  return (args: Record<string, unknown>) => runTool(tool, args, ctxFor("/tmp"));
}

/**
 * DNS seam: public.test answers 127.0.0.2, which the tests whitelist as the stand-in for a
 * public address (a real socket, no network needed); 127.0.0.1 stays refused.
 */
const PUBLIC_STAND_IN = ["127.0.0.2/32"];
const publicDns: ResolveHost = async (host) => (host === "public.test" ? ["127.0.0.2"] : host === "internal.test" ? ["10.9.8.7"] : []);

describe("web_fetch content extraction", () => {
  it("returns the article as markdown without scripts or navigation", async () => {
    const result = await webFetch()({ url: `${base}/article` });
    expect(result.isError).toBe(false);
    expect(result.text).toMatch(new RegExp(`^URL: ${base}/article\\nStatus: 200\\nTitle: Test Article\\n`));
    expect(result.text).toContain("**important**");
    expect(result.text).toContain("[reference link](https://example.com/ref)");
    expect(result.text).not.toContain("SCRIPT_TEXT");
    expect(result.text).not.toContain("About");
  });

  it("returns plain text in text mode", async () => {
    const result = await webFetch()({ url: `${base}/article`, extract_mode: "text" });
    expect(result.text).toContain("the important finding");
    expect(result.text).not.toContain("**");
  });

  it("pretty-prints JSON, reads PDFs and refuses other binary types", async () => {
    expect((await webFetch()({ url: `${base}/json` })).text).toContain('{\n  "a": 1,\n  "b": [\n    true\n  ]\n}');
    expect((await webFetch()({ url: `${base}/pdf` })).text).toContain("PDF over HTTP");
    const png = await webFetch()({ url: `${base}/png` });
    expect(png.isError).toBe(true);
    expect(png.text).toMatch(/unsupported content type image\/png/);
  });

  it("cuts content at max_chars (default 50,000) and says so", async () => {
    const result = await webFetch()({ url: `${base}/long`, max_chars: 1000 });
    expect(result.text).toContain(`${"z".repeat(1000)}\n\n(Content truncated at 1,000 of 10,000 characters; raise max_chars to see more.)`);
    expect((await webFetch()({ url: `${base}/long` })).text).not.toContain("truncated");
  });

  it("decodes a gzip-encoded body", async () => {
    expect((await webFetch()({ url: `${base}/gzip` })).text).toContain("compressed body text");
  });

  it("marks HTTP errors", async () => {
    const result = await webFetch()({ url: `${base}/missing` });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^HTTP 404\n/);
    expect(result.text).toContain("no such page");
  });
});

describe("web_fetch limits", () => {
  it("stops reading at the byte cap while streaming", async () => {
    const result = await webFetch({ web: { fetch: { maxBytes: 256 * 1024 } } })({ url: `${base}/endless`, max_chars: 500_000 });
    expect(result.text).toContain("(Download stopped at the 262,144-byte cap.)");
    expect(result.text.match(/e/g)?.length).toBeGreaterThanOrEqual(262_144);
    expect(await aborted).toBe(true);
  });

  it("gives up after the timeout", async () => {
    const result = await webFetch({ web: { fetch: { timeoutMs: 200 } } })({ url: `${base}/hang` });
    expect(result).toMatchObject({ isError: true, text: `Error: fetching ${base}/hang timed out after 0.2 s.` });
  });

  it("stops redirect loops", async () => {
    const result = await webFetch()({ url: `${base}/loop` });
    expect(result.text).toBe(`Error: too many redirects (more than 5) starting at ${base}/loop`);
  });
});

describe("web_fetch SSRF guard", () => {
  it("follows allowed redirects", async () => {
    const result = await webFetch()({ url: `${base}/redirect` });
    expect(result.text).toMatch(new RegExp(`^URL: ${base}/article\\n`));
    expect(hits).toEqual(["/redirect", "/article"]);
  });

  it("blocks loopback when it is not whitelisted", async () => {
    const result = await webFetch({ ssrfWhitelist: [] })({ url: `${base}/article` });
    expect(result).toMatchObject({ isError: true, text: "Error: URL blocked by SSRF guard: 127.0.0.1 is a loopback address" });
    expect(hits).toEqual([]);
  });

  it("blocks a redirect to 127.0.0.1 from a public host", async () => {
    const result = await webFetch({ ssrfWhitelist: PUBLIC_STAND_IN, resolveHost: publicDns })({ url: `http://public.test:${port}/redirect-local` });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      `Error: URL blocked by SSRF guard: 127.0.0.1 is a loopback address (reached by redirect from http://public.test:${port}/redirect-local)`,
    );
    expect(publicHits).toEqual(["/redirect-local"]);
    expect(hits).toEqual([]);
  });

  it("blocks a redirect to a private address even when loopback is whitelisted", async () => {
    const result = await webFetch()({ url: `${base}/redirect-private` });
    expect(result.text).toMatch(/^Error: URL blocked by SSRF guard: 10\.0\.0\.1 is a private address \(reached by redirect/);
  });

  it("blocks a host name that resolves to a private address, before connecting", async () => {
    const result = await webFetch({ resolveHost: publicDns })({ url: `http://internal.test:${port}/` });
    expect(result.text).toBe("Error: URL blocked by SSRF guard: internal.test resolves to a blocked address: 10.9.8.7 is a private address");
    expect([...hits, ...publicHits]).toEqual([]);
  });

  it("blocks decimal, octal, hex and IPv6-mapped spellings of loopback", async () => {
    const go = webFetch({ ssrfWhitelist: [] });
    for (const host of ["2130706433", "0177.0.0.1", "0x7f000001", "[::ffff:127.0.0.1]", "[::127.0.0.1]", "[::7f00:1]", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]"]) {
      const result = await go({ url: `http://${host}:${port}/article` });
      expect(result.text, host).toMatch(/^Error: URL blocked by SSRF guard: 127\.0\.0\.1 is a loopback address/);
    }
    expect(hits).toEqual([]);
  });

  it("refuses non-http schemes", async () => {
    expect((await webFetch()({ url: "file:///etc/passwd" })).text).toMatch(/scheme file: is not allowed/);
  });
});

describe("web_fetch connects only to the address it checked (pinned lookup)", () => {
  /** A DNS-rebinding stand-in: a public answer for the check, loopback for any later question. */
  function rebinding(): { resolve: ResolveHost; calls: string[] } {
    const calls: string[] = [];
    return {
      calls,
      resolve: async (host) => {
        calls.push(host);
        return calls.filter((h) => h === host).length === 1 ? ["127.0.0.2"] : ["127.0.0.1"];
      },
    };
  }

  it("a name that rebinds to 127.0.0.1 after the check never reaches the loopback server", async () => {
    const dns = rebinding();
    const result = await webFetch({ ssrfWhitelist: PUBLIC_STAND_IN, resolveHost: dns.resolve })({ url: `http://rebind.test:${port}/article` });
    expect(result.isError).toBe(false);
    expect(result.text).toMatch(new RegExp(`^URL: http://rebind.test:${port}/article\\nStatus: 200\\nTitle: Test Article`));
    // The request went to the checked address; DNS was asked once; loopback got nothing.
    expect(publicHits).toEqual(["/article"]);
    expect(hits).toEqual([]);
    expect(dns.calls).toEqual(["rebind.test"]);
  });

  it("every redirect hop is checked and pinned on its own", async () => {
    const dns = rebinding();
    const result = await webFetch({ ssrfWhitelist: PUBLIC_STAND_IN, resolveHost: dns.resolve })({ url: `http://rebind.test:${port}/redirect-other` });
    expect(result.text).toMatch(new RegExp(`^URL: http://other.test:${port}/article\nStatus: 200`));
    expect(publicHits).toEqual(["/redirect-other", "/article"]);
    expect(hits).toEqual([]);
    expect(dns.calls).toEqual(["rebind.test", "other.test"]);
  });

  it("a name that rebinds between two hops is refused at the second check, before connecting", async () => {
    const dns = rebinding();
    const result = await webFetch({ ssrfWhitelist: PUBLIC_STAND_IN, resolveHost: dns.resolve })({ url: `http://rebind.test:${port}/redirect` });
    expect(result.text).toBe(
      `Error: URL blocked by SSRF guard: rebind.test resolves to a blocked address: 127.0.0.1 is a loopback address (reached by redirect from http://rebind.test:${port}/redirect)`,
    );
    expect(publicHits).toEqual(["/redirect"]);
    expect(hits).toEqual([]);
  });

  it("the pinned lookup hands out only checked addresses for the checked host", async () => {
    const { pinnedLookup } = await import("../../src/tools/builtin/web-fetch-pinned.js");
    const guard = new SsrfGuard({ whitelist: PUBLIC_STAND_IN });
    const lookup = pinnedLookup("a.test", ["127.0.0.2", "127.0.0.1", "::7f00:1"], (a) => guard.checkAddress(a));
    const ask = (host: string, options: object) =>
      new Promise<unknown>((resolve) => lookup(host, options as never, (err, address) => resolve(err ? `error: ${err.message}` : address)));
    expect(await ask("a.test", { all: true })).toEqual([{ address: "127.0.0.2", family: 4 }]);
    expect(await ask("a.test", {})).toBe("127.0.0.2");
    expect(await ask("a.test", { family: 6 })).toBe("error: connection refused by SSRF pinning: no checked address for a.test");
    expect(await ask("b.test", {})).toBe("error: connection refused by SSRF pinning: b.test is not the checked host a.test");
  });
});

describe("web_fetch over https, pinned", () => {
  let tls: HttpsServer;
  let cert: string;
  let dir: string;
  let tlsHits: string[];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "nanobot-tls-"));
    // A self-signed certificate for the name public.test (generated: no key material in the repo).
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
      "-subj", "/CN=public.test", "-addext", "subjectAltName=DNS:public.test",
      "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    cert = await readFile(path.join(dir, "cert.pem"), "utf8");
    tlsHits = [];
    tls = createHttpsServer({ key: await readFile(path.join(dir, "key.pem")), cert }, (req, res) => {
      tlsHits.push(`${req.socket.localAddress} ${req.headers.host} ${req.url}`);
      res.writeHead(200, { "content-type": "text/plain" }).end("over tls");
    });
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.2", resolve));
  });
  afterEach(async () => {
    tls.closeAllConnections();
    await new Promise((resolve) => tls.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const tool = (ca?: string) =>
    createWebFetchTool({ ssrf: new SsrfGuard({ whitelist: PUBLIC_STAND_IN, resolveHost: publicDns }), ...(ca ? { ca } : {}) });

  it("connects to the checked address and verifies the certificate against the host name", async () => {
    const tlsPort = (tls.address() as AddressInfo).port;
    const result = await runTool(tool(cert), { url: `https://public.test:${tlsPort}/x` }, ctxFor("/tmp"));
    expect(result.text).toContain("over tls");
    expect(tlsHits).toEqual([`127.0.0.2 public.test:${tlsPort} /x`]);
  });

  it("refuses a certificate it cannot verify", async () => {
    const tlsPort = (tls.address() as AddressInfo).port;
    const result = await runTool(tool(), { url: `https://public.test:${tlsPort}/x` }, ctxFor("/tmp"));
    expect(result).toMatchObject({ isError: true, text: expect.stringMatching(/^Error: fetching https:\/\/public\.test:\d+\/x failed: .*certificate/) });
    expect(tlsHits).toEqual([]);
  });
});
