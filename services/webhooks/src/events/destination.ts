import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a delivery may go (SSRF rules). The host is resolved once; every address it resolves to
 * must be globally routable unicast, or in a range the operator allowed (WEBHOOKS_ALLOWED_RANGES);
 * the connection then goes to that one address (pinned), so a second resolution cannot lead
 * elsewhere.
 *
 * An allowlist, not a list of refused ranges: ipaddr.js (the address library fastify's
 * proxy-addr uses) names every special-purpose range of the IANA registries, and only what it
 * calls `unicast` passes, in IPv6 only inside 2000::/3, the global unicast space. A list of
 * refused ranges let through what it forgot (`::127.0.0.1`, 6to4, Teredo, site-local, the 6to4
 * relay anycast). An IPv6 address that embeds an IPv4 one (mapped, IPv4-compatible, translated,
 * NAT64's well-known prefix) is judged by the IPv4 address it reaches.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

class RefusedDestinationError extends Error {}

export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

/** What the delivery log calls each range ipaddr.js names. */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'shared (carrier-grade NAT)',
  private: 'private',
  uniqueLocal: 'private (unique local)',
  deprecatedSiteLocal: 'site-local',
  reserved: 'reserved',
  benchmarking: 'benchmarking',
  discard: 'discard',
  ipv4Mapped: 'IPv4-mapped',
  ipv4Compatible: 'IPv4-compatible',
  rfc6145: 'IPv4-translated',
  rfc6052: 'NAT64',
  '6to4': '6to4',
  teredo: 'Teredo',
  amt: 'AMT',
  as112: 'AS112',
  as112v6: 'AS112',
  deprecatedOrchid: 'ORCHID',
  orchid2: 'ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'drone remote ID',
  segmentRouting: 'segment routing',
};
const words = (range: string) => RANGE_WORDS[range] ?? range;

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];

/** The ranges the operator allows despite the rules (WEBHOOKS_ALLOWED_RANGES). */
export interface AllowedRanges {
  admits(address: Address): boolean;
}

/** `127.0.0.0/8,::1/128` → the ranges allowed; a malformed entry throws (config check). */
export function allowedRanges(spec: string): AllowedRanges {
  const ranges: [Address, number][] = [];
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const [text, bits, extra] = entry.split('/');
    const net = parseAddress(text);
    const prefix = Number(bits);
    const longest = net?.kind() === 'ipv4' ? 32 : 128;
    if (!net || extra !== undefined || !/^\d+$/.test(bits ?? '') || prefix > longest)
      throw new Error(`not a CIDR range: "${entry}"`);
    ranges.push([net, prefix]);
  }
  return {
    admits: (address) =>
      ranges.some(([net, bits]) => net.kind() === address.kind() && address.match(net as never, bits)),
  };
}

/** The IPv4 address an IPv6 one stands for, and how it embeds it; null for a plain IPv6 address. */
function embeddedIPv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; via: string } | null {
  const p = address.parts;
  const ipv4 = () => new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
  if (address.match(NAT64_WELL_KNOWN)) return { ipv4: ipv4(), via: 'rfc6052' };
  if (p[0] || p[1] || p[2] || p[3]) return null;
  if (p[4] === 0 && p[5] === 0xffff) return { ipv4: ipv4(), via: 'ipv4Mapped' };
  if (p[4] === 0xffff && p[5] === 0) return { ipv4: ipv4(), via: 'rfc6145' };
  // ::/96 but :: and ::1, which are IPv6's own unspecified and loopback addresses.
  if (p[4] === 0 && p[5] === 0 && (p[6] || p[7] > 1)) return { ipv4: ipv4(), via: 'ipv4Compatible' };
  return null;
}

/** The range that keeps a delivery from `address`, or null when it may go there. */
function refusedRange(address: Address, allowed: AllowedRanges): string | null {
  if (address.kind() === 'ipv4')
    return allowed.admits(address) || address.range() === 'unicast' ? null : address.range();
  const ipv6 = address as ipaddr.IPv6;
  const embedded = embeddedIPv4(ipv6);
  if (embedded) {
    // The IPv4 address reached must pass on its own; then the wrapping too, unless it is the
    // plain mapped form (a socket connects to the IPv4 address itself).
    const inner = refusedRange(embedded.ipv4, allowed);
    if (inner) return inner;
    return embedded.via === 'ipv4Mapped' || allowed.admits(ipv6) ? null : embedded.via;
  }
  if (allowed.admits(ipv6)) return null;
  const range = ipv6.range();
  if (range !== 'unicast') return range;
  return ipv6.match(GLOBAL_UNICAST_V6) ? null : 'notGlobal';
}

/**
 * An address as the socket will read it. IPv6 goes through the WHATWG URL parser first (what
 * `new URL` made of the subscription's host, and the same reading as the system's inet_pton):
 * ipaddr.js alone reads `::127.0.0.1` as the mapped `::ffff:127.0.0.1`, where a socket connects to
 * the IPv4-compatible `::7f00:1`.
 */
function parseAddress(text: string): Address | null {
  const bare = text.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) names an interface, not a range
  const family = isIP(bare);
  if (family === 4) return ipaddr.IPv4.parse(bare);
  if (family !== 6) return null;
  try {
    return ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
  } catch {
    return null;
  }
}

/** Why an address is refused (`private range`), or null when a delivery may go there. */
export function refusal(address: string, allowed: AllowedRanges): string | null {
  const parsed = parseAddress(address);
  if (!parsed) return 'not an IP address';
  const range = refusedRange(parsed, allowed);
  if (range === null) return null;
  return range === 'notGlobal' ? 'not globally routable range' : `${words(range)} range`;
}

/** 127.0.0.0/8 or ::1 (or the mapped form of a 127.0.0.0/8 address). */
export function isLoopback(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  const embedded = parsed.kind() === 'ipv6' ? embeddedIPv4(parsed as ipaddr.IPv6) : null;
  return (embedded?.via === 'ipv4Mapped' ? embedded.ipv4 : parsed).range() === 'loopback';
}

/**
 * Resolves the URL's host once and checks every address; the first is the one connected to. A
 * refusal names the range, never the address a name resolved to (the delivery log is the
 * subscriber's to read, and the internal network is not).
 */
export async function pinDestination(url: URL, allowed: AllowedRanges): Promise<PinnedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) as 4 | 6 }]
    : await lookup(host, { all: true, verbatim: true }).catch((err: NodeJS.ErrnoException) => {
        throw new Error(`DNS lookup of ${host} failed (${err.code ?? err.message})`);
      });
  if (addresses.length === 0) throw new Error(`DNS lookup of ${host} gave no address`);
  for (const a of addresses) {
    const why = refusal(a.address, allowed);
    if (why) throw new RefusedDestinationError(`destination refused (${why})`);
  }
  return { address: addresses[0].address, family: addresses[0].family as 4 | 6 };
}
