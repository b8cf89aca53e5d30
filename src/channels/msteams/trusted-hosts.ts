/**
 * Which serviceUrls the bot trusts with its token (`trustedServiceUrlHosts`, as the Python
 * nanobot): HTTPS to a listed host, `*.example.com` for its subdomains. Plain HTTP is accepted
 * only for a loopback host (a local test server), where the token never leaves the machine.
 */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

export function isTrustedServiceUrl(serviceUrl: string, hosts: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(serviceUrl.trim());
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (!host) return false;
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(host))) return false;
  return hosts.some((pattern) => {
    const trusted = pattern.trim().toLowerCase().replace(/\.$/, "");
    if (!trusted) return false;
    if (trusted.startsWith("*.")) return host.endsWith(trusted.slice(1)) && host !== trusted.slice(2);
    return host === trusted || (trusted === "::1" && host === "[::1]");
  });
}
