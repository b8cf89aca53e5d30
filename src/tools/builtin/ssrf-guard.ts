/**
 * The SSRF guard: an outbound URL may only reach public unicast addresses. Literal IPs in any
 * notation (decimal, octal, hex, IPv4-mapped IPv6, NAT64) are normalised before the check and
 * host names are resolved through an injectable resolver, so a public-looking name pointing
 * at 10.0.0.1 is refused too. `tools.ssrfWhitelist` CIDRs open specific ranges.
 *
 * Known limit: the HTTP client resolves the name again when it connects (DNS rebinding window).
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { ConfigError } from "../../core/errors.js";

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

/** Parses an IP literal in any notation ipaddr.js accepts; undefined when it is not an IP. */
export function parseIpLiteral(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  try {
    return ipaddr.parse(bare);
  } catch {
    return undefined;
  }
}

function inCidrs(address: ipaddr.IPv4 | ipaddr.IPv6, cidrs: readonly Cidr[]): boolean {
  return cidrs.some(([range, bits]) => address.kind() === range.kind() && address.match([range, bits] as never));
}

/**
 * Why an address is not allowed, or undefined for a public unicast address. IPv4-mapped IPv6
 * is judged as the IPv4 it carries; every special range (NAT64, 6to4, Teredo, …) is refused.
 */
export function blockedAddressReason(address: ipaddr.IPv4 | ipaddr.IPv6, whitelist: readonly Cidr[] = []): string | undefined {
  const normalised = address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
  if (inCidrs(normalised, whitelist) || inCidrs(address, whitelist)) return undefined;
  const text = normalised.toString();
  if (text === "169.254.169.254" || text === "fd00:ec2::254") return `${text} is a cloud metadata address`;
  const range = normalised.range();
  if (range === "unicast") return undefined;
  return `${text} is a ${range} address`;
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
      const ip = parseIpLiteral(address);
      const reason = ip ? blockedAddressReason(ip, this.whitelist) : `resolver returned a non-IP ${address}`;
      if (reason) return { ok: false, reason: `${host} resolves to a blocked address: ${reason}` };
    }
    return { ok: true, url, addresses };
  }
}
