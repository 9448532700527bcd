import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a delivery may go (SSRF rules). The host is resolved once; every address it resolves to
 * must be public, or in a range the operator allowed (WEBHOOKS_ALLOWED_RANGES); the connection
 * then goes to that one address (pinned), so a second resolution cannot lead elsewhere.
 */

/** Ranges no delivery goes to unless allowed: private, loopback, link-local, metadata, reserved. */
const REFUSED: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (carrier-grade NAT, cloud metadata)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved (IETF, metadata)'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64'],
  ['100::', 64, 'ipv6', 'discard'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['fc00::', 7, 'ipv6', 'private (unique local, cloud metadata)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

export class RefusedDestinationError extends Error {}

export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** `127.0.0.0/8,::1/128` → a BlockList of what is allowed; a malformed entry throws (config check). */
export function allowedRanges(spec: string): BlockList {
  const list = new BlockList();
  for (const raw of spec.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const [address, bits] = entry.split('/');
    const prefix = Number(bits);
    if (!isIP(address) || !Number.isInteger(prefix)) throw new Error(`not a CIDR range: "${entry}"`);
    list.addSubnet(address, prefix, familyOf(address));
  }
  return list;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** 127.0.0.0/8 or ::1. */
export const isLoopback = (address: string) => LOOPBACK.check(address, familyOf(address));

/** Why an address is refused, or null when a delivery may go there. */
export function refusal(address: string, allowed: BlockList): string | null {
  const type = familyOf(address);
  if (allowed.check(address, type)) return null;
  for (const [net, prefix, family, what] of REFUSED) {
    if (family !== type) continue;
    const one = new BlockList();
    one.addSubnet(net, prefix, family);
    if (one.check(address, type)) return `${address} is in a ${what} range`;
  }
  return null;
}

/** Resolves the URL's host once and checks every address; the first is the one connected to. */
export async function pinDestination(url: URL, allowed: BlockList): Promise<PinnedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [{ address: host, family: isIP(host) as 4 | 6 }]
    : await lookup(host, { all: true, verbatim: true }).catch((err: NodeJS.ErrnoException) => {
        throw new Error(`DNS lookup of ${host} failed (${err.code ?? err.message})`);
      });
  if (addresses.length === 0) throw new Error(`DNS lookup of ${host} gave no address`);
  for (const a of addresses) {
    const why = refusal(a.address, allowed);
    if (why) throw new RefusedDestinationError(`destination refused: ${host} resolves to ${why}`);
  }
  return { address: addresses[0].address, family: addresses[0].family as 4 | 6 };
}
