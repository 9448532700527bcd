import { BlockList, isIP } from 'node:net';

/**
 * Normalises one allowlist entry: an IPv4/IPv6 address or CIDR. Returns null when invalid.
 * Addresses are kept as given (lower-cased); prefix lengths are range-checked.
 */
export function normaliseAllowlistEntry(raw: string): string | null {
  const entry = raw.trim().toLowerCase();
  if (entry.length === 0 || entry.length > 64) return null;
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined) return null;
  const family = isIP(address);
  if (family === 0) return null;
  if (prefix === undefined) return address;
  if (!/^\d{1,3}$/.test(prefix)) return null;
  const bits = Number(prefix);
  if (bits > (family === 4 ? 32 : 128)) return null;
  return `${address}/${bits}`;
}

/** Parses a comma-separated (or array) allowlist; throws naming the first bad entry. */
export function parseAllowlist(input: string | string[]): string[] {
  const parts = (Array.isArray(input) ? input : input.split(','))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const out: string[] = [];
  for (const p of parts) {
    const n = normaliseAllowlistEntry(p);
    if (!n) throw new Error(`"${p}" is not an IPv4/IPv6 address or CIDR`);
    if (!out.includes(n)) out.push(n);
  }
  if (out.length > 256) throw new Error('at most 256 allowlist entries');
  return out;
}

/**
 * Whether `address` may call with an API key under this list (empty = no restriction): what the
 * console checks before saving a global list that would lock out the administrator's own address.
 */
export function allowlistAdmits(list: readonly string[], address: string | null): boolean {
  if (list.length === 0) return true;
  const mapped = address ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address) : null;
  const ip = mapped ? mapped[1] : address;
  const family = ip ? isIP(ip) : 0;
  if (!ip || family === 0) return false;
  const blocks = new BlockList();
  for (const entry of list) {
    const [base, bits] = entry.split('/');
    const type = isIP(base) === 4 ? 'ipv4' : 'ipv6';
    if (isIP(base) === 0) continue;
    if (bits === undefined) blocks.addAddress(base, type);
    else blocks.addSubnet(base, Number(bits), type);
  }
  return blocks.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}
