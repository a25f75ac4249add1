/**
 * Which address a request comes from, for the per-address limits (address-limits.ts). The
 * socket's peer, unless that peer is one of the proxies the operator lists (`trustedProxies`,
 * CIDRs): then `X-Forwarded-For` is read from its right end, each hop a trusted proxy added,
 * and the first address no trusted proxy vouches for is the client. A client cannot pick its
 * own address by sending the header: what it writes is left of what its first proxy appended.
 */
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { ConfigError } from '../errors/kernel-errors.js';

/** IPv4 clients of a dual-stack socket show as `::ffff:a.b.c.d`; limits key them as IPv4. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  /** `cidrs` as the config gives them (`10.0.0.0/8`, `::1/128`, or a bare address); checked by the schema and here. */
  constructor(cidrs: readonly string[]) {
    for (const cidr of cidrs) {
      const [address = '', bits] = cidr.split('/');
      const family = isIP(address);
      if (family === 0) throw new ConfigError(`trustedProxies: "${cidr}" is not an address or CIDR`);
      const type = family === 4 ? 'ipv4' : 'ipv6';
      const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128))
        throw new ConfigError(`trustedProxies: "${cidr}" has an invalid prefix length`);
      this.list.addSubnet(address, prefix, type);
    }
    this.size = cidrs.length;
  }

  trusts(address: string): boolean {
    if (this.size === 0) return false;
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** The client's address: the peer, or what trusted proxies say they received the request from. */
  clientOf(req: IncomingMessage): string {
    let address = plainAddress(req.socket.remoteAddress ?? 'unknown');
    if (!this.trusts(address)) return address;
    const forwarded = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? ''))
      .split(',')
      .map((hop) => plainAddress(hop.trim()));
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = hops[index];
      // A hop that is not an address (a proxy writing `unknown`, a client's garbage): the
      // proxy that appended it is the last one we can vouch for.
      if (isIP(hop) === 0) return address;
      address = hop;
      if (!this.trusts(hop)) return hop;
    }
    return address;
  }
}
