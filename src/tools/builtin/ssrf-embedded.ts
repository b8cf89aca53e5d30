/**
 * The IPv4 addresses an IPv6 address carries. An SSRF check that judges only the IPv6 range
 * lets `[::7f00:1]` (IPv4-compatible 127.0.0.1) through as "unicast"; every form below names an
 * IPv4 host the packets may end up at, so the guard judges that IPv4 too.
 *
 * Same-host forms (the address *is* the IPv4 on the wire, or a translator turns it into it):
 * IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`, IPv4-translated `::ffff:0:0:0/96`
 * (RFC 2765) and the NAT64 well-known prefix `64:ff9b::/96` (RFC 6052).
 * Tunnel forms (the IPv4 is a tunnel end point): 6to4 `2002::/16` (bits 16-47), Teredo
 * `2001::/32` (server in bits 32-63, client in the last 32 bits, inverted), ISATAP (interface
 * identifier `0:5efe` or `200:5efe`, with the u/g variants, then the IPv4).
 *
 * Not detectable from the address alone: NAT64 network-specific prefixes (any operator prefix)
 * and the local-use prefix `64:ff9b:1::/48`, whose IPv4 position depends on the operator's
 * prefix length; the guard refuses `64:ff9b:1::/48` as a special range instead.
 */
import ipaddr from "ipaddr.js";

export type EmbeddingForm = "IPv4-mapped" | "IPv4-compatible" | "IPv4-translated" | "NAT64" | "6to4" | "Teredo server" | "Teredo client" | "ISATAP";

export interface EmbeddedIPv4 {
  form: EmbeddingForm;
  ipv4: ipaddr.IPv4;
  /** The IPv6 address stands for this IPv4 host itself (not a tunnel end point). */
  isSameHost: boolean;
}

function v4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

const zero = (parts: readonly number[], from: number, to: number): boolean => parts.slice(from, to).every((p) => p === 0);

export function embeddedIPv4(address: ipaddr.IPv6): EmbeddedIPv4[] {
  const p = address.parts;
  const last = (): ipaddr.IPv4 => v4(p[6] ?? 0, p[7] ?? 0);
  const found: EmbeddedIPv4[] = [];
  if (zero(p, 0, 5) && p[5] === 0xffff) found.push({ form: "IPv4-mapped", ipv4: last(), isSameHost: true });
  // `::` and `::1` are the IPv6 unspecified and loopback addresses, judged as themselves.
  if (zero(p, 0, 6) && (p[6] !== 0 || (p[7] ?? 0) > 1)) found.push({ form: "IPv4-compatible", ipv4: last(), isSameHost: true });
  if (zero(p, 0, 4) && p[4] === 0xffff && p[5] === 0) found.push({ form: "IPv4-translated", ipv4: last(), isSameHost: true });
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(p, 2, 6)) found.push({ form: "NAT64", ipv4: last(), isSameHost: true });
  if (p[0] === 0x2002) found.push({ form: "6to4", ipv4: v4(p[1] ?? 0, p[2] ?? 0), isSameHost: false });
  if (p[0] === 0x2001 && p[1] === 0) {
    found.push({ form: "Teredo server", ipv4: v4(p[2] ?? 0, p[3] ?? 0), isSameHost: false });
    found.push({ form: "Teredo client", ipv4: v4(~(p[6] ?? 0) & 0xffff, ~(p[7] ?? 0) & 0xffff), isSameHost: false });
  }
  const isatapId = p[4] === 0 || p[4] === 0x100 || p[4] === 0x200 || p[4] === 0x300;
  if (isatapId && p[5] === 0x5efe) found.push({ form: "ISATAP", ipv4: last(), isSameHost: false });
  return found;
}
