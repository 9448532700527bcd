import ipaddr from 'ipaddr.js';

/**
 * The key a per-address limit counts a client under. An IPv4 address (also written IPv4-mapped,
 * `::ffff:203.0.113.7`) is itself; an IPv6 address is its /64, because one subscriber usually
 * holds a whole /64 and could otherwise step past any per-address limit by changing the last
 * 64 bits. Anything unparsable is kept as given (it still counts, under its own text).
 */
export function addressKey(address: string | null | undefined): string {
  if (!address) return 'unknown';
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}
