import { describe, expect, it } from "vitest";
import { hostRefusal, hostnameOf, localNamesFor, originRefusal, rejectedHost } from "../../src/gateway/host-check.js";

describe("Host checks", () => {
  it("parses host header values", () => {
    expect(hostnameOf("LOCALHOST:3000")).toBe("localhost");
    expect(hostnameOf("[::1]:8080")).toBe("::1");
    expect(hostnameOf("127.0.0.1")).toBe("127.0.0.1");
    expect(hostnameOf("[::1].evil.example")).toBe("[::1].evil.example");
  });

  it("accepts loopback names on any port and refuses other names", () => {
    for (const host of ["127.0.0.1:18790", "localhost", "LOCALHOST:1", "[::1]:9", "127.3.4.5:80"]) expect(hostRefusal(host), host).toBeUndefined();
    for (const host of ["evil.example", "evil.example:18790", "localhost.evil.example", "127.0.0.1.nip.io", "0.0.0.0:18790", "[::1].evil.example"]) {
      expect(hostRefusal(host), host).toMatch(/^Host ".*" is not allowed \(add its name to gateway\.allowedHosts/);
    }
    expect(hostRefusal(undefined)).toBe("missing Host header");
  });

  it("accepts the bound address, and allowedHosts by name (any port) or name:port (that port)", () => {
    const policy = { localNames: ["192.168.1.20"], allowedHosts: ["bot.example.com", "other.example:8443"] };
    expect(hostRefusal("192.168.1.20:18790", policy)).toBeUndefined();
    expect(hostRefusal("BOT.example.com:443", policy)).toBeUndefined();
    expect(hostRefusal("other.example:8443", policy)).toBeUndefined();
    expect(hostRefusal("other.example:8444", policy)).toContain("not allowed");
    expect(hostRefusal("192.168.1.21", policy)).toContain("not allowed");
  });

  it("a wildcard bind answers to this machine's interface addresses, a specific one to itself", () => {
    expect(localNamesFor("0.0.0.0")).toContain("127.0.0.1");
    expect(localNamesFor("[::1]")).toEqual(["::1"]);
    expect(localNamesFor("10.0.0.5")).toEqual(["10.0.0.5"]);
  });
});

describe("Origin checks", () => {
  it("no Origin (curl, SDKs) and the gateway's own origin pass; other origins do not", () => {
    expect(originRefusal(undefined, "127.0.0.1:18790")).toBeUndefined();
    expect(originRefusal("http://127.0.0.1:18790", "127.0.0.1:18790")).toBeUndefined();
    expect(originRefusal("http://localhost", "localhost:80")).toBeUndefined();
    // Behind a TLS proxy the browser's origin is https on the same host.
    expect(originRefusal("https://bot.example.com", "bot.example.com")).toBeUndefined();
    for (const origin of ["http://evil.example", "null", "http://localhost:5173", "http://127.0.0.1:18791", "http://localhost:18790", "ftp://127.0.0.1:18790", "http://127.0.0.1:18790/x"]) {
      expect(originRefusal(origin, "127.0.0.1:18790"), origin).toMatch(/^Origin ".*" is not allowed/);
    }
  });

  it("allowedOrigins are compared in normalised form", () => {
    const policy = { allowedOrigins: ["https://app.example.com", "http://localhost:5173"] };
    expect(originRefusal("https://app.example.com", "127.0.0.1:18790", policy)).toBeUndefined();
    expect(originRefusal("https://app.example.com:443", "127.0.0.1:18790", policy)).toBeUndefined();
    expect(originRefusal("http://localhost:5173", "127.0.0.1:18790", policy)).toBeUndefined();
    expect(originRefusal("https://other.example.com", "127.0.0.1:18790", policy)).toContain("not allowed");
  });

  it("rejectedHost (the MCP endpoint's check) applies both to any method's headers", () => {
    const h = (entries: Record<string, string>): Headers => new Headers(entries);
    expect(rejectedHost(h({ host: "127.0.0.1:18790" }))).toBeUndefined();
    expect(rejectedHost(h({ host: "localhost:3000", origin: "http://localhost:3000" }))).toBeUndefined();
    expect(rejectedHost(h({ host: "evil.example.com" }))).toContain('Host "evil.example.com" is not allowed');
    expect(rejectedHost(h({ host: "localhost", origin: "http://evil.example.com" }))).toContain('Origin "http://evil.example.com" is not allowed');
    expect(rejectedHost(h({}))).toBe("missing Host header");
  });
});
