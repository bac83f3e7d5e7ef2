import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
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
      else if (ipaddr.isValid(entry)) this.privateCidrs.push([ipaddr.parse(entry), ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128]);
      else this.privateHosts.add(entry.toLowerCase());
    }
    this.protocols = new Set((options.protocols ?? ['http', 'https']).map((p) => p.replace(/:$/, '') + ':'));
    this.resolve = options.resolve ?? (async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address));
  }

  /** Resolves and checks a URL; returns the addresses it may connect to, or throws TargetRefusedError. */
  async check(url: string): Promise<string[]> {
    let parsed: URL;
    try { parsed = new URL(url); } catch { throw new TargetRefusedError(url, 'not a valid URL'); }
    if (!this.protocols.has(parsed.protocol)) throw new TargetRefusedError(url, `scheme ${parsed.protocol} is not allowed`);
    if (parsed.username || parsed.password) throw new TargetRefusedError(url, 'credentials in URLs are not allowed');
    const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (!this.hostAllowed(host)) throw new TargetRefusedError(url, `host ${host} is not in the allow-list`);
    let addresses: string[];
    if (ipaddr.isValid(host)) addresses = [host];
    else {
      try { addresses = await this.resolve(host); } catch (error) { throw new TargetRefusedError(url, `host ${host} does not resolve (${(error as Error).message})`); }
    }
    if (addresses.length === 0) throw new TargetRefusedError(url, `host ${host} does not resolve`);
    for (const address of addresses) this.checkAddress(url, host, address);
    return addresses;
  }

  /** Throws unless `address` (resolved for `host`) may be connected to. */
  checkAddress(url: string, host: string, address: string): void {
    if (this.addressAllowed(host, address)) return;
    throw new TargetRefusedError(url, `${host} resolves to ${address}, which is not a public address`);
  }

  addressAllowed(host: string, address: string): boolean {
    if (!ipaddr.isValid(address)) return false;
    let ip = ipaddr.parse(address);
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
    if (ip.range() === PUBLIC_RANGE) return true;
    if (this.privateHosts.has(host.toLowerCase())) return true;
    return this.privateCidrs.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  }

  hostAllowed(host: string): boolean {
    if (this.allowedHosts.length === 0) return true;
    return this.allowedHosts.some((pattern) =>
      pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1 : host === pattern);
  }
}
