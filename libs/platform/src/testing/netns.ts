import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Teardownable } from './env.js';
import { processAlive } from './servers.js';

/**
 * A network of Linux network namespaces made by a test, so that it can cut one server off from
 * its peers (a partition) while the test's own processes still reach it. Each member runs in a
 * namespace of its own, `sd-nats-<owner pid>-<id>-<i>`, whose only link is a veth on a bridge in
 * the root namespace that has no other member; the bridge holds 10.233.<n>.1/24 and member i
 * 10.233.<n>.<11 + i>. The namespaces have no default route (nothing in them can reach beyond the
 * bridge's subnet) and IP forwarding is off inside them (the kernel's default for a new one).
 * Needs root (CAP_NET_ADMIN), `ip` (iproute2) and `iptables`.
 */
export interface NamespaceNetwork {
  /** The bridge's address: the one the root namespace's clients reach the members from. */
  hostAddress: string;
  members: { netns: string; address: string }[];
  /** The command prefix that runs a program in member i's namespace (`ip netns exec` execs it). */
  exec(i: number): string[];
  /** Drops every packet between member i and the other members; the root namespace still reaches it. */
  partition(i: number): void;
  /** Undoes every partition. */
  heal(): void;
  /** Removes the namespaces (their veths go with them) and the bridge; safe to call twice. */
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
 * its teardowns unrun): namespaces and bridges of this prefix whose owner pid (in the namespace's
 * name, in the bridge's alias) is gone, and the servers still running in such a namespace, which
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
  const bridges = JSON.parse(ip('-j', 'link', 'show', 'type', 'bridge') || '[]') as {
    ifname: string;
    ifalias?: string;
  }[];
  for (const b of bridges) if (stale(b.ifalias)) quietly(() => ip('link', 'del', b.ifname));
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
  // Interface names are at most 15 characters: the owner goes into the bridge's alias.
  const bridge = `sdn${id}`;
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
      for (const m of members) quietly(() => ip('netns', 'del', m.netns));
      quietly(() => ip('link', 'del', bridge));
    },
  };
  t.teardown(() => network.remove());
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('link', 'set', bridge, 'alias', owner);
    ip('addr', 'add', `${hostAddress}/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    members.forEach((m, i) => {
      const veth = `${bridge}h${i}`;
      ip('netns', 'add', m.netns);
      ip('-n', m.netns, 'link', 'set', 'lo', 'up');
      ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', m.netns);
      ip('link', 'set', veth, 'master', bridge, 'up');
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
