import { BlockList, isIP } from 'node:net';

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) is checked as `10.0.0.1`. */
function normalizeIp(ip: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const address = mapped ? mapped[1] : ip;
  const v = isIP(address);
  if (v === 4) return { address, family: 'ipv4' };
  if (v === 6) return { address, family: 'ipv6' };
  return null;
}

/** Builds a matcher for entries like `203.0.113.7`, `10.0.0.0/8`, `2001:db8::1`, `2001:db8::/32`. */
function compileAllowlist(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) continue;
    const [addr, bits] = entry.split('/');
    const ip = normalizeIp(addr);
    if (!ip) continue; // identity validates entries; an unparsable one admits nobody
    if (bits === undefined) list.addAddress(ip.address, ip.family);
    else {
      const prefix = Number(bits);
      const max = ip.family === 'ipv4' ? 32 : 128;
      if (Number.isInteger(prefix) && prefix >= 0 && prefix <= max)
        list.addSubnet(ip.address, prefix, ip.family);
    }
  }
  return list;
}

/**
 * API-key calls pass when the client address is in every non-empty list (the global list from
 * settings and the key's own); empty lists do not restrict. Compiled lists are memoised by content.
 */
export function createIpAllowlist() {
  const compiled = new Map<string, BlockList>();
  const get = (entries: readonly string[]) => {
    const id = entries.join(',');
    let list = compiled.get(id);
    if (!list) {
      if (compiled.size > 10_000) compiled.clear();
      list = compileAllowlist(entries);
      compiled.set(id, list);
    }
    return list;
  };
  return {
    allows(clientIp: string | undefined, ...lists: readonly (readonly string[])[]): boolean {
      const active = lists.filter((l) => l.length > 0);
      if (active.length === 0) return true;
      const ip = clientIp ? normalizeIp(clientIp) : null;
      if (!ip) return false;
      return active.every((l) => get(l).check(ip.address, ip.family));
    },
  };
}

export type IpAllowlist = ReturnType<typeof createIpAllowlist>;
