import ipaddr from 'ipaddr.js';

/** An IPv6 form that carries an IPv4 address inside it, and the IPv4 addresses it carries. */
export interface EmbeddedIPv4 {
  form: 'IPv4-mapped' | 'IPv4-compatible' | 'IPv4-translated' | 'NAT64' | '6to4' | 'Teredo';
  addresses: ipaddr.IPv4[];
}

const v4 = (bytes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(bytes);

function zeros(bytes: number[], from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) if (bytes[i] !== 0) return false;
  return true;
}

/**
 * The IPv4 addresses an IPv6 address embeds, by the standard forms that route or translate to
 * them: IPv4-mapped `::ffff:0:0/96` and IPv4-compatible `::/96` (RFC 4291), IPv4-translated
 * `::ffff:0:0:0/96` (RFC 2765), NAT64 `64:ff9b::/96` (RFC 6052) and the local-use `64:ff9b:1::/48`
 * (RFC 8215; its operator picks the prefix length, so every RFC 6052 layout from /48 to /96 is
 * read), 6to4 `2002::/16` (RFC 3056) and Teredo `2001::/32` (RFC 4380: server and client). Undefined
 * for any other address.
 */
export function embeddedIPv4(address: ipaddr.IPv6): EmbeddedIPv4 | undefined {
  const b = address.toByteArray();
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff)
    return { form: 'IPv4-mapped', addresses: [v4(b.slice(12, 16))] };
  if (zeros(b, 0, 12)) return { form: 'IPv4-compatible', addresses: [v4(b.slice(12, 16))] };
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0)
    return { form: 'IPv4-translated', addresses: [v4(b.slice(12, 16))] };
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zeros(b, 4, 12)) return { form: 'NAT64', addresses: [v4(b.slice(12, 16))] };
    if (b[4] === 0x00 && b[5] === 0x01) {
      // RFC 6052 layouts skip octet 8 (the "u" octet): /48, /56, /64 and /96.
      return {
        form: 'NAT64',
        addresses: [
          v4([b[6], b[7], b[9], b[10]]),
          v4([b[7], b[9], b[10], b[11]]),
          v4(b.slice(9, 13)),
          v4(b.slice(12, 16)),
        ],
      };
    }
  }
  if (b[0] === 0x20 && b[1] === 0x02) return { form: '6to4', addresses: [v4(b.slice(2, 6))] };
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) {
    // Teredo: the server's address as is, the client's with every bit inverted.
    return { form: 'Teredo', addresses: [v4(b.slice(4, 8)), v4(b.slice(12, 16).map((byte) => byte ^ 0xff))] };
  }
  return undefined;
}
