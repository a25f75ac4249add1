import ipaddr from 'ipaddr.js';

export type Mode = 'production' | 'development';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

// An allow-list, not a deny-list: only what ipaddr.js calls plain 'unicast' may be reached, so
// a special range we forgot to name below is still refused (with a generic reason).
const V4_REASONS: Record<string, string> = {
  unspecified: 'an unspecified address (0.0.0.0/8)',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (169.254.0.0/16)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  private: 'a private address (RFC 1918)',
  reserved: 'a reserved, documentation or benchmark address',
};

const V6_REASONS: Record<string, string> = {
  unspecified: 'an unspecified address (::)',
  loopback: 'a loopback address',
  linkLocal: 'a link-local address (fe80::/10)',
  uniqueLocal: 'a unique-local address (fc00::/7)',
  multicast: 'a multicast address',
  deprecatedSiteLocal: 'a site-local address (fec0::/10)',
  // Both embed an IPv4 address whose reachability we cannot judge from here; they are
  // deprecated and no webhook receiver needs them.
  '6to4': 'a 6to4 address (2002::/16)',
  teredo: 'a Teredo address (2001::/32)',
  rfc6145: 'an IPv4-translated address (::ffff:0:0:0/96)',
  rfc6052: 'a local-use NAT64 address (64:ff9b:1::/48)',
  reserved: 'a reserved, documentation or benchmark address',
  benchmarking: 'a reserved, documentation or benchmark address',
};

// Everything assigned for global unicast lives here; ipaddr.js calls the unassigned rest of
// ::/8 (including IPv4-compatible ::a.b.c.d, which some stacks route to the IPv4 address)
// 'unicast' as well, so 'unicast' alone is not enough for IPv6.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const IPV4_COMPATIBLE_V6 = ipaddr.parseCIDR('::/96');
// DNS64 on an IPv6-only network legitimately answers public names with this prefix, so it is
// judged by the IPv4 address it carries instead of being refused outright.
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

function ipv4Reason(ip: IPv4, mode: Mode): string | null {
  const range = ip.range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && mode === 'development') return null;
  return V4_REASONS[range] ?? `a special-purpose address (${range})`;
}

function embeddedReason(kind: string, ip: IPv4, mode: Mode): string | null {
  const reason = ipv4Reason(ip, mode);
  return reason === null ? null : `${kind} of ${ip.toString()}, ${reason}`;
}

function ipv6Reason(ip: IPv6, mode: Mode): string | null {
  // The socket ends up talking IPv4 to the embedded address, so that address is what counts.
  if (ip.isIPv4MappedAddress()) return embeddedReason('an IPv4-mapped address', ip.toIPv4Address(), mode);
  if (ip.match(NAT64_WELL_KNOWN)) {
    const embedded = ipaddr.fromByteArray(ip.toByteArray().slice(12)) as IPv4;
    return embeddedReason('a NAT64 address', embedded, mode);
  }
  const range = ip.range();
  if (range === 'loopback' && mode === 'development') return null;
  if (range === 'unicast') {
    if (ip.match(GLOBAL_UNICAST_V6)) return null;
    if (ip.match(IPV4_COMPATIBLE_V6)) return 'an IPv4-compatible address (::/96)';
    return 'an unassigned address outside 2000::/3';
  }
  return V6_REASONS[range] ?? `a special-purpose address (${range})`;
}

/** Parses an IP address as the resolver or URL gives it (IPv6 may be bracketed or carry a zone). */
export function parseAddress(address: string): IPv4 | IPv6 | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  try {
    return ipaddr.parse(bare);
  } catch {
    return null;
  }
}

/** Why an address is forbidden in this mode, or null when allowed. */
export function forbiddenAddressReason(address: string, mode: Mode): string | null {
  const ip = parseAddress(address);
  if (ip === null) return 'not an IP address';
  return ip.kind() === 'ipv4' ? ipv4Reason(ip as IPv4, mode) : ipv6Reason(ip as IPv6, mode);
}
