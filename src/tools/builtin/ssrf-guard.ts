/**
 * The SSRF guard: an outbound URL may only reach public unicast addresses. Literal IPs in any
 * notation (decimal, octal, hex, every IPv6 form that carries an IPv4 — see ssrf-embedded) are
 * normalised before the check and host names are resolved through an injectable resolver, so
 * a public-looking name pointing at 10.0.0.1 is refused too. `tools.ssrfWhitelist` CIDRs open
 * specific ranges.
 *
 * The addresses a check returns are the only ones a connection may use: web_fetch connects
 * through a lookup pinned to them (web-fetch-pinned), so DNS is not asked again between the
 * check and the connection (no rebinding window).
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { ConfigError } from "../../core/errors.js";
import { embeddedIPv4 } from "./ssrf-embedded.js";

/** Resolves a host name to its IP addresses (the seam tests use to fake DNS). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

export const defaultResolveHost: ResolveHost = async (hostname) => {
  const results = await lookup(hostname, { all: true, verbatim: true });
  return results.map((result) => result.address);
};

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Names that mean "this machine" or a cloud metadata service, whatever DNS says. */
const BLOCKED_NAMES = [/^localhost$/i, /\.localhost$/i, /^metadata\.google\.internal$/i, /^metadata$/i, /^instance-data$/i];

export function parseCidrList(list: readonly string[], keyPath = "tools.ssrfWhitelist"): Cidr[] {
  return list.map((entry, i) => {
    try {
      return entry.includes("/") ? ipaddr.parseCIDR(entry) : ([ipaddr.parse(entry), entry.includes(":") ? 128 : 32] as Cidr);
    } catch {
      throw new ConfigError(`Invalid CIDR ${JSON.stringify(entry)}`, { path: `${keyPath}[${i}]`, expected: "a CIDR such as 10.0.0.0/8 or fd00::/8" });
    }
  });
}

/**
 * Parses an IP literal in any notation ipaddr.js accepts; undefined when it is not an IP.
 * IPv6 text goes through the URL parser first: ipaddr.js reads `::1.2.3.4` (IPv4-compatible)
 * as `::ffff:1.2.3.4`, and the URL parser's canonical form is what a connection would use.
 */
export function parseIpLiteral(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  try {
    if (!bare.includes(":")) return ipaddr.parse(bare);
    return ipaddr.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
  } catch {
    return undefined;
  }
}

function inCidrs(address: ipaddr.IPv4 | ipaddr.IPv6, cidrs: readonly Cidr[]): boolean {
  return cidrs.some(([range, bits]) => address.kind() === range.kind() && address.match([range, bits] as never));
}

function verdictV4(address: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  const text = address.toString();
  if (text === "169.254.169.254" || text === "fd00:ec2::254") return `${text} is a cloud metadata address`;
  const range = address.range();
  return range === "unicast" ? undefined : `${text} is a ${range} address`;
}

/**
 * Why an address is not allowed, or undefined for a public unicast address. An IPv6 address
 * that carries an IPv4 is judged as that IPv4 (IPv4-mapped, -compatible, -translated, NAT64):
 * it is that IPv4 on the wire. Tunnel forms (6to4, Teredo, ISATAP) are refused when the IPv4
 * they lead to is not public, and 6to4/Teredo themselves stay refused as special ranges.
 */
export function blockedAddressReason(address: ipaddr.IPv4 | ipaddr.IPv6, whitelist: readonly Cidr[] = []): string | undefined {
  if (inCidrs(address, whitelist)) return undefined;
  if (address.kind() === "ipv6") {
    for (const embedded of embeddedIPv4(address as ipaddr.IPv6)) {
      if (inCidrs(embedded.ipv4, whitelist)) {
        if (embedded.isSameHost) return undefined;
        continue;
      }
      const reason = verdictV4(embedded.ipv4);
      if (embedded.isSameHost) {
        // Mapped addresses have always been named by their IPv4 alone; the others say their form.
        return reason && embedded.form !== "IPv4-mapped" ? `${reason} (${embedded.form} ${address.toString()})` : reason;
      }
      if (reason) return `${reason} (${embedded.form} ${address.toString()})`;
    }
  }
  return verdictV4(address);
}

export type UrlCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

export interface SsrfGuardOptions {
  whitelist?: readonly string[];
  resolveHost?: ResolveHost;
}

export class SsrfGuard {
  private readonly whitelist: Cidr[];
  private readonly resolveHost: ResolveHost;

  constructor(options: SsrfGuardOptions = {}) {
    this.whitelist = parseCidrList(options.whitelist ?? []);
    this.resolveHost = options.resolveHost ?? defaultResolveHost;
  }

  /** Synchronous verdict on a host as written (no DNS): literals and reserved names only. */
  checkHostLiteral(host: string): string | undefined {
    const bare = host.replace(/^\[|\]$/g, "").replace(/\.$/, "");
    const ip = parseIpLiteral(bare);
    if (ip) return blockedAddressReason(ip, this.whitelist);
    if (BLOCKED_NAMES.some((pattern) => pattern.test(bare))) return `${bare} is a local or metadata host name`;
    return undefined;
  }

  /** Verdict on one resolved address (text form); used again by the pinned connection. */
  checkAddress(address: string): string | undefined {
    const ip = parseIpLiteral(address);
    return ip ? blockedAddressReason(ip, this.whitelist) : `resolver returned a non-IP ${address}`;
  }

  /** Full check of one URL: scheme, literal host, then every address the name resolves to. */
  async checkUrl(input: string | URL): Promise<UrlCheck> {
    let url: URL;
    try {
      url = typeof input === "string" ? new URL(input) : input;
    } catch {
      return { ok: false, reason: `invalid URL: ${String(input)}` };
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: `scheme ${url.protocol} is not allowed (http and https only)` };
    if (url.username || url.password) return { ok: false, reason: "URLs with credentials are not allowed" };
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const literal = this.checkHostLiteral(host);
    if (literal) return { ok: false, reason: literal };
    if (parseIpLiteral(host)) return { ok: true, url, addresses: [host] };
    let addresses: string[];
    try {
      addresses = await this.resolveHost(host);
    } catch (error) {
      return { ok: false, reason: `could not resolve ${host}: ${(error as Error).message}` };
    }
    if (addresses.length === 0) return { ok: false, reason: `${host} did not resolve to any address` };
    for (const address of addresses) {
      const reason = this.checkAddress(address);
      if (reason) return { ok: false, reason: `${host} resolves to a blocked address: ${reason}` };
    }
    return { ok: true, url, addresses };
  }
}
