import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { SsrfGuard, type ResolveHost } from "../../src/tools/builtin/ssrf-guard.js";
import { ALLOWED_RESOLUTIONS, BLOCKED_LITERAL_URLS, BLOCKED_RESOLUTIONS } from "./fixtures/ssrf-corpus.js";

const fakeDns: ResolveHost = async (host) => {
  const answer = BLOCKED_RESOLUTIONS[host] ?? ALLOWED_RESOLUTIONS[host];
  if (!answer) throw new Error(`ENOTFOUND ${host}`);
  return answer;
};
const noDns: ResolveHost = async (host) => {
  throw new Error(`unexpected DNS lookup for ${host}`);
};

describe("SSRF guard: literal addresses in every notation", () => {
  it.each(BLOCKED_LITERAL_URLS.map((u) => [u]))("blocks %s without a DNS lookup", async (url) => {
    const verdict = await new SsrfGuard({ resolveHost: noDns }).checkUrl(url);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).not.toMatch(/unexpected DNS/);
  });

  it("names the normalised address in the reason", async () => {
    const guard = new SsrfGuard({ resolveHost: noDns });
    expect(await guard.checkUrl("http://2130706433/")).toEqual({ ok: false, reason: "127.0.0.1 is a loopback address" });
    expect(await guard.checkUrl("http://0x7f000001/")).toEqual({ ok: false, reason: "127.0.0.1 is a loopback address" });
    expect(await guard.checkUrl("http://0177.0.0.1/")).toEqual({ ok: false, reason: "127.0.0.1 is a loopback address" });
    expect(await guard.checkUrl("http://[::ffff:127.0.0.1]/")).toEqual({ ok: false, reason: "127.0.0.1 is a loopback address" });
    expect(await guard.checkUrl("http://169.254.169.254/")).toEqual({ ok: false, reason: "169.254.169.254 is a cloud metadata address" });
    expect(await guard.checkUrl("http://[::ffff:a9fe:a9fe]/")).toEqual({ ok: false, reason: "169.254.169.254 is a cloud metadata address" });
    expect(await guard.checkUrl("http://100.64.0.1/")).toEqual({ ok: false, reason: "100.64.0.1 is a carrierGradeNat address" });
  });

  it("lets public literals through", async () => {
    const guard = new SsrfGuard({ resolveHost: noDns });
    expect(await guard.checkUrl("https://93.184.216.34/x")).toMatchObject({ ok: true, addresses: ["93.184.216.34"] });
    expect(await guard.checkUrl("http://[2606:4700::1111]/")).toMatchObject({ ok: true });
  });
});

describe("SSRF guard: names resolving to private addresses", () => {
  it.each(Object.keys(BLOCKED_RESOLUTIONS).map((h) => [h]))("blocks %s", async (host) => {
    const verdict = await new SsrfGuard({ resolveHost: fakeDns }).checkUrl(`https://${host}/path`);
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringContaining(`${host} resolves to a blocked address`) });
  });

  it.each(Object.keys(ALLOWED_RESOLUTIONS).map((h) => [h]))("allows %s", async (host) => {
    expect(await new SsrfGuard({ resolveHost: fakeDns }).checkUrl(`https://${host}/`)).toMatchObject({ ok: true, addresses: ALLOWED_RESOLUTIONS[host] });
  });

  it("blocks names that do not resolve", async () => {
    expect(await new SsrfGuard({ resolveHost: fakeDns }).checkUrl("https://nowhere.invalid/")).toMatchObject({ ok: false, reason: expect.stringMatching(/could not resolve/) });
  });
});

describe("SSRF guard: IPv6 forms that carry an IPv4 are judged as that IPv4", () => {
  const guard = new SsrfGuard({ resolveHost: noDns });
  it.each([
    ["http://[::127.0.0.1]/", "127.0.0.1 is a loopback address (IPv4-compatible ::7f00:1)"],
    ["http://[::7f00:1]/", "127.0.0.1 is a loopback address (IPv4-compatible ::7f00:1)"],
    ["http://[::ffff:7f00:1]/", "127.0.0.1 is a loopback address"],
    ["http://[::ffff:0:7f00:1]/", "127.0.0.1 is a loopback address (IPv4-translated ::ffff:0:7f00:1)"],
    ["http://[64:ff9b::a9fe:a9fe]/", "169.254.169.254 is a cloud metadata address (NAT64 64:ff9b::a9fe:a9fe)"],
    ["http://[2002:a00:1::1]/", "10.0.0.1 is a private address (6to4 2002:a00:1::1)"],
    ["http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "127.0.0.1 is a loopback address (Teredo client 2001:0:4136:e378:8000:63bf:80ff:fffe)"],
    ["http://[2001:0:a00:1::1]/", "10.0.0.1 is a private address (Teredo server 2001:0:a00:1::1)"],
    ["http://[2606:4700::5efe:a00:1]/", "10.0.0.1 is a private address (ISATAP 2606:4700::5efe:a00:1)"],
  ])("%s is refused as the IPv4 it carries", async (url, reason) => {
    expect(await guard.checkUrl(url)).toEqual({ ok: false, reason });
  });

  it("the IPv6 loopback and unspecified addresses are named as themselves", async () => {
    expect(await guard.checkUrl("http://[::1]/")).toEqual({ ok: false, reason: "::1 is a loopback address" });
    expect(await guard.checkUrl("http://[::]/")).toEqual({ ok: false, reason: ":: is a unspecified address" });
  });

  it("same-host forms of a public IPv4 pass (a DNS64 answer on an IPv6-only network); tunnels stay refused", async () => {
    expect(await guard.checkUrl("http://[64:ff9b::5db8:d822]/")).toMatchObject({ ok: true });
    expect(await guard.checkUrl("http://[::ffff:5db8:d822]/")).toMatchObject({ ok: true });
    expect(await guard.checkUrl("http://[2002:5db8:d822::1]/")).toEqual({ ok: false, reason: "2002:5db8:d822::1 is a 6to4 address" });
    expect(await guard.checkUrl("http://[2606:4700::200:5efe:5db8:d822]/")).toMatchObject({ ok: true });
  });

  it("a whitelisted IPv4 opens its same-host IPv6 spellings, not its tunnels", async () => {
    const open = new SsrfGuard({ whitelist: ["10.0.0.0/8"], resolveHost: noDns });
    expect(await open.checkUrl("http://[::ffff:a00:1]/")).toMatchObject({ ok: true });
    expect(await open.checkUrl("http://[64:ff9b::a00:1]/")).toMatchObject({ ok: true });
    expect(await open.checkUrl("http://[2002:a00:1::1]/")).toMatchObject({ ok: false });
  });

  it("checkAddress judges resolver answers in dotted IPv6 notation too", () => {
    expect(guard.checkAddress("::127.0.0.1")).toBe("127.0.0.1 is a loopback address (IPv4-compatible ::7f00:1)");
    expect(guard.checkAddress("::ffff:10.1.2.3")).toBe("10.1.2.3 is a private address");
    expect(guard.checkAddress("not-an-ip")).toBe("resolver returned a non-IP not-an-ip");
  });
});

describe("SSRF whitelist", () => {
  it("opens exactly the configured CIDRs", async () => {
    const guard = new SsrfGuard({ whitelist: ["10.0.0.0/8", "fd00::/8", "127.0.0.1"], resolveHost: fakeDns });
    expect(await guard.checkUrl("https://internal.example.com/")).toMatchObject({ ok: true });
    expect(await guard.checkUrl("http://[fd00::5]/")).toMatchObject({ ok: true });
    expect(await guard.checkUrl("http://127.0.0.1:8080/")).toMatchObject({ ok: true });
    expect(await guard.checkUrl("http://127.0.0.2/")).toMatchObject({ ok: false });
    expect(await guard.checkUrl("http://192.168.1.1/")).toMatchObject({ ok: false });
  });

  it("rejects an invalid CIDR at configuration time", () => {
    expect(() => new SsrfGuard({ whitelist: ["10.0.0.0/99"] })).toThrow(ConfigError);
  });
});
