import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { embeddedIPv4 } from './embedded-ipv4.js';
import { TargetRefusedError } from './target-refused-error.js';

export interface TargetPolicyOptions {
  /** Host patterns a URL's host must match when the list is not empty: `api.example.com`, `*.example.com` (any subdomain). */
  allowedHosts?: string[];
  /** Hosts or CIDRs (`localhost`, `127.0.0.1/32`, `10.0.0.0/8`) allowed although their addresses are not public. */
  allowPrivate?: string[];
  /** Default: http and https. */
  protocols?: string[];
  /** Injectable resolver (tests); default dns.lookup with all addresses. */
  resolve?: (host: string) => Promise<string[]>;
}

const PUBLIC_RANGE = 'unicast';

/**
 * Decides whether the service may call a URL: the host must match the allow-list (if any) and every address
 * it resolves to must be public unless explicitly allowed. Shared by HTTP_CALL nodes and execution callbacks
 * (through OutboundHttpClient), and checked on its own when a callback URL is submitted.
 */
export class TargetPolicy {
  private readonly allowedHosts: string[];
  private readonly privateHosts: Set<string>;
  private readonly privateCidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][];
  private readonly protocols: Set<string>;
  private readonly resolve: (host: string) => Promise<string[]>;

  constructor(options: TargetPolicyOptions = {}) {
    this.allowedHosts = (options.allowedHosts ?? []).map((h) => h.toLowerCase());
    this.privateHosts = new Set();
    this.privateCidrs = [];
    for (const entry of options.allowPrivate ?? []) {
      if (entry.includes('/')) this.privateCidrs.push(ipaddr.parseCIDR(entry));
      else if (ipaddr.isValid(entry))
        this.privateCidrs.push([ipaddr.parse(entry), ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128]);
      else this.privateHosts.add(entry.toLowerCase());
    }
    this.protocols = new Set((options.protocols ?? ['http', 'https']).map((p) => `${p.replace(/:$/, '')}:`));
    this.resolve =
      options.resolve ?? (async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address));
  }

  /** Resolves and checks a URL; returns the addresses it may connect to, or throws TargetRefusedError. */
  async check(url: string): Promise<string[]> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TargetRefusedError(url, 'not a valid URL');
    }
    if (!this.protocols.has(parsed.protocol))
      throw new TargetRefusedError(url, `scheme ${parsed.protocol} is not allowed`);
    if (parsed.username || parsed.password) throw new TargetRefusedError(url, 'credentials in URLs are not allowed');
    const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (!this.hostAllowed(host)) throw new TargetRefusedError(url, `host ${host} is not in the allow-list`);
    let addresses: string[];
    if (ipaddr.isValid(host)) addresses = [host];
    else {
      try {
        addresses = await this.resolve(host);
      } catch (error) {
        throw new TargetRefusedError(url, `host ${host} does not resolve (${(error as Error).message})`);
      }
    }
    if (addresses.length === 0) throw new TargetRefusedError(url, `host ${host} does not resolve`);
    for (const address of addresses) this.checkAddress(url, host, address);
    return addresses;
  }

  /** Throws unless `address` (resolved for `host`) may be connected to. */
  checkAddress(url: string, host: string, address: string): void {
    if (this.addressAllowed(host, address)) return;
    // Name the setting: the operator who meant to reach a private or loopback receiver needs to know where to allow it.
    throw new TargetRefusedError(
      url,
      `${host} resolves to ${address}, which is not a public address (private and loopback targets must be listed in OUTBOUND_ALLOW_LIST)`,
    );
  }

  /**
   * Public addresses are allowed; others only when the host or a CIDR is allow-listed. An IPv6
   * address that embeds IPv4 addresses (src/outbound/embedded-ipv4.ts) is judged by them: an
   * IPv4-mapped address exactly as its IPv4 address (it is the same socket destination); any other
   * form only when every embedded address is public, or the IPv6 address itself is allow-listed.
   */
  addressAllowed(host: string, address: string): boolean {
    const ip = parseAddress(address);
    if (!ip) return false;
    if (this.privateHosts.has(host.toLowerCase())) return true;
    if (ip.kind() === 'ipv4') return ip.range() === PUBLIC_RANGE || this.listed(ip);
    const embedded = embeddedIPv4(ip as ipaddr.IPv6);
    if (embedded?.form === 'IPv4-mapped')
      return embedded.addresses[0].range() === PUBLIC_RANGE || this.listed(embedded.addresses[0]);
    if (embedded) return embedded.addresses.every((inner) => inner.range() === PUBLIC_RANGE) || this.listed(ip);
    return ip.range() === PUBLIC_RANGE || this.listed(ip);
  }

  private listed(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.privateCidrs.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  }

  hostAllowed(host: string): boolean {
    if (this.allowedHosts.length === 0) return true;
    return this.allowedHosts.some((pattern) =>
      pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1 : host === pattern,
    );
  }
}

/**
 * Parses an address as the network sees it. IPv6 text goes through the WHATWG URL parser first:
 * ipaddr.js reads a dotted tail (`::127.0.0.1`, the notation resolvers print for IPv4-compatible
 * addresses) as IPv4-mapped, which is a different address.
 */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!address.includes(':'))
    return ipaddr.IPv4.isValidFourPartDecimal(address) ? ipaddr.IPv4.parse(address) : undefined;
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  return ipaddr.IPv6.isValid(canonical) ? ipaddr.IPv6.parse(canonical) : undefined;
}
