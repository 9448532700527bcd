import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Teardownable } from './env.js';
import { processAlive } from './servers.js';

/**
 * A network of Linux network namespaces made by a test, so that it can cut one server off from
 * its peers (a partition) while the test's own processes still reach it. Each member runs in a
 * namespace of its own, `sd-nats-<owner pid>-<id>-<i>`; a hub namespace (`…-hub`) holds the only
 * bridge, whose ports are a veth to each member and one veth to the root namespace. The root
 * namespace gets just that veth's end (10.233.<n>.1/24, aliased with the owner): no bridge and no
 * forwarding there, so neither the machine's firewall (a FORWARD policy, br_netfilter) nor its
 * sysctls are involved, and the layout is the one the test cluster's node already uses (a bridge
 * inside a namespace, a veth to the host). Member i is 10.233.<n>.<11 + i>. The namespaces have no
 * default route (nothing in them can reach beyond the subnet) and IP forwarding is off inside them
 * (the kernel's default for a new one). Needs root (CAP_NET_ADMIN), `ip` (iproute2) and `iptables`.
 */
export interface NamespaceNetwork {
  /** The root namespace's address on the network: the one its clients reach the members from. */
  hostAddress: string;
  members: { netns: string; address: string }[];
  /** The command prefix that runs a program in member i's namespace (`ip netns exec` execs it). */
  exec(i: number): string[];
  /** Drops every packet between member i and the other members; the root namespace still reaches it. */
  partition(i: number): void;
  /** Undoes every partition. */
  heal(): void;
  /** Removes the namespaces (their veths go with them) and the uplink; safe to call twice. */
  remove(): void;
}

const PREFIX = 'sd-nats-';
const ip = (...args: string[]) =>
  execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 10_000 });
const quietly = (fn: () => unknown) => {
  try {
    fn();
  } catch {
    // already gone
  }
};

/**
 * Removes what a test process killed before its teardown left behind (tap's timeout kills it with
 * its teardowns unrun): namespaces and uplinks of this prefix whose owner pid (in the namespace's
 * name, in the uplink's alias) is gone, and the servers still running in such a namespace, which
 * that test started.
 */
function removeStale(): void {
  const stale = (name: string | undefined) => {
    const pid = Number(new RegExp(`^${PREFIX}(\\d+)-`).exec(name ?? '')?.[1]);
    return pid > 0 && !processAlive(pid);
  };
  const namespaces = JSON.parse(ip('-j', 'netns', 'list') || '[]') as { name: string }[];
  for (const { name } of namespaces) {
    if (!stale(name)) continue;
    for (const pid of ip('netns', 'pids', name).split('\n').map(Number).filter(Boolean))
      quietly(() => process.kill(pid, 'SIGKILL'));
    quietly(() => ip('netns', 'del', name));
  }
  const links = JSON.parse(ip('-j', 'link', 'show', 'type', 'veth') || '[]') as {
    ifname: string;
    ifalias?: string;
  }[];
  for (const l of links) if (stale(l.ifalias)) quietly(() => ip('link', 'del', l.ifname));
}

/** A /24 of 10.233.0.0/16 no route of this machine uses yet; bounded to 256 tries. */
function freeSubnet(): number {
  const start = (process.pid + randomBytes(1)[0]) % 256;
  for (let k = 0; k < 256; k++) {
    const n = (start + k) % 256;
    if (!ip('route', 'show', 'to', 'match', `10.233.${n}.0/24`).includes('10.233.')) return n;
  }
  throw new Error('no free /24 in 10.233.0.0/16 for a test network');
}

/** Makes the network of `count` members; removed at teardown, even when the test failed. */
export function namespaceNetwork(t: Teardownable, count: number): NamespaceNetwork {
  removeStale();
  const id = randomBytes(3).toString('hex');
  const owner = `${PREFIX}${process.pid}-${id}`;
  const hub = `${owner}-hub`;
  // Interface names are at most 15 characters: the owner goes into the root end's alias.
  const uplink = `sdn${id}`;
  const subnet = freeSubnet();
  const hostAddress = `10.233.${subnet}.1`;
  const members = Array.from({ length: count }, (_, i) => ({
    netns: `${owner}-${i}`,
    address: `10.233.${subnet}.${11 + i}`,
  }));
  const iptables = (i: number, ...args: string[]) =>
    ip('netns', 'exec', members[i].netns, 'iptables', ...args);
  const network: NamespaceNetwork = {
    hostAddress,
    members,
    exec: (i) => ['ip', 'netns', 'exec', members[i].netns],
    partition(i) {
      for (const peer of members) {
        if (peer === members[i]) continue;
        iptables(i, '-A', 'INPUT', '-s', peer.address, '-j', 'DROP');
        iptables(i, '-A', 'OUTPUT', '-d', peer.address, '-j', 'DROP');
      }
    },
    heal() {
      for (let i = 0; i < count; i++) {
        iptables(i, '-F', 'INPUT');
        iptables(i, '-F', 'OUTPUT');
      }
    },
    remove() {
      // A namespace outlives its name while a process still runs in it; its veth goes with it.
      // The hub's veths go with it, the root namespace's end of the uplink too.
      for (const m of members) quietly(() => ip('netns', 'del', m.netns));
      quietly(() => ip('netns', 'del', hub));
      quietly(() => ip('link', 'del', uplink));
    },
  };
  t.teardown(() => network.remove());
  try {
    ip('netns', 'add', hub);
    ip('-n', hub, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', hub, 'link', 'set', 'br0', 'up');
    ip('link', 'add', uplink, 'type', 'veth', 'peer', 'name', 'up0', 'netns', hub);
    ip('link', 'set', uplink, 'alias', owner);
    ip('addr', 'add', `${hostAddress}/24`, 'dev', uplink);
    ip('link', 'set', uplink, 'up');
    ip('-n', hub, 'link', 'set', 'up0', 'master', 'br0', 'up');
    members.forEach((m, i) => {
      const port = `m${i}`;
      ip('netns', 'add', m.netns);
      ip('-n', m.netns, 'link', 'set', 'lo', 'up');
      ip('-n', hub, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', m.netns);
      ip('-n', hub, 'link', 'set', port, 'master', 'br0', 'up');
      ip('-n', m.netns, 'addr', 'add', `${m.address}/24`, 'dev', 'eth0');
      ip('-n', m.netns, 'link', 'set', 'eth0', 'up');
    });
  } catch (err) {
    network.remove();
    const e = err as Error & { stderr?: string };
    throw new Error(`making the test's network namespaces: ${e.stderr?.trim() || e.message}`);
  }
  return network;
}
