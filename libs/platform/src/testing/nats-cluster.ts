import { natsClusterArgs } from '@support-desk/platform/launch';
import type { Teardownable } from './env.js';
import { namespaceNetwork } from './netns.js';
import { findBinary, freePort, privateServer, type PrivateServer } from './servers.js';

export interface PrivateNatsCluster {
  /** Every server's URL, comma-separated (NATS_URL for a cluster). */
  url: string;
  servers: (PrivateServer & { name: string; monitorPort: number })[];
  /** Waits until every server is healthy and the cluster has a JetStream leader (after a restart). */
  ready(): Promise<void>;
  /** The server leading `stream` now (its monitoring's view), or null while there is none. */
  streamLeader(stream: string): Promise<string | null>;
  /**
   * Cuts the server named `name` off from the other two (every packet between them dropped) while
   * its clients still reach it; only on a cluster started with `partitionable: true`.
   */
  partition(name: string): void;
  /** Undoes `partition`. */
  heal(): void;
  /** A server's monitoring endpoint as JSON (e.g. `/connz`); null when it does not answer. */
  monitoring(name: string, path: string): Promise<Record<string, unknown> | null>;
}

/** GET a server's monitoring endpoint as JSON; null when it does not answer. */
async function monitoring(host: string, port: number, path: string): Promise<Record<string, unknown> | null> {
  try {
    const res = await fetch(`http://${host}:${port}${path}`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? ((await res.json()) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * A private JetStream cluster of three nats-servers (the settings of the clustered profile,
 * scripts/infra/clustered-nats.mjs), ready once it has a meta leader. Stopped at teardown.
 * With `partitionable`, each server runs in a network namespace of its own on a bridge the test
 * makes (netns.ts; root only), listening on its namespace's address, so that `partition` can cut
 * one off from its peers; else all three listen on loopback.
 */
export async function startPrivateNatsCluster(
  t: Teardownable,
  { partitionable = false }: { partitionable?: boolean } = {},
): Promise<PrivateNatsCluster> {
  const network = partitionable ? namespaceNetwork(t, 3) : null;
  const places: { host: string; port: number; routePort: number; monitorPort: number; name: string }[] = [];
  for (let i = 0; i < 3; i++)
    places.push({
      host: network?.members[i].address ?? '127.0.0.1',
      port: await freePort(),
      routePort: await freePort(),
      monitorPort: await freePort(),
      name: `n${i + 1}`,
    });
  const servers = places.map((place, i) =>
    Object.assign(
      privateServer(
        t,
        'nats',
        (p, dir) => {
          const bin = process.env.NATS_SERVER_BIN || findBinary('nats-server');
          const args = natsClusterArgs({
            host: place.host,
            port: p,
            dir,
            monitorPort: place.monitorPort,
            serverName: place.name,
            clusterName: 'test',
            routePort: place.routePort,
            routes: places.map((o) => ({ host: o.host, port: o.routePort })),
          });
          if (!network) return { bin, args };
          const [exec, ...prefix] = network.exec(i);
          return { bin: exec, args: [...prefix, bin, ...args] };
        },
        place.port,
        undefined,
        place.host,
      ),
      { name: place.name, monitorPort: place.monitorPort },
    ),
  );
  await Promise.all(servers.map((s) => s.start()));
  const monitor = (i: number, path: string) => monitoring(places[i].host, places[i].monitorPort, path);
  /** Every server healthy (JetStream current) and a meta leader elected, within 60 s. */
  async function ready() {
    for (let i = 0; ; i++) {
      const jsz = (await monitor(0, '/jsz')) as {
        meta_cluster?: { leader?: string; cluster_size?: number };
      } | null;
      const healthy = await Promise.all(places.map((_, n) => monitor(n, '/healthz')));
      if (jsz?.meta_cluster?.leader && healthy.every((h) => h?.status === 'ok')) return;
      if (i >= 240)
        throw new Error('the private NATS cluster was not healthy with a JetStream leader in 60 s');
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  await ready();
  const index = (name: string) => {
    const i = places.findIndex((p) => p.name === name);
    if (i < 0) throw new Error(`no server ${name} in the private NATS cluster`);
    return i;
  };
  const partitioning = () => {
    if (!network)
      throw new Error('start the private NATS cluster with { partitionable: true } to partition it');
    return network;
  };
  return {
    url: servers.map((s) => s.url).join(','),
    servers,
    ready,
    async streamLeader(stream: string) {
      for (let i = 0; i < places.length; i++) {
        const jsz = (await monitor(i, '/jsz?streams=true')) as {
          account_details?: { stream_detail?: { name: string; cluster?: { leader?: string } }[] }[];
        } | null;
        for (const account of jsz?.account_details ?? [])
          for (const detail of account.stream_detail ?? [])
            if (detail.name === stream && detail.cluster?.leader) return detail.cluster.leader;
      }
      return null;
    },
    partition: (name) => partitioning().partition(index(name)),
    heal: () => partitioning().heal(),
    monitoring: (name, path) => monitor(index(name), path),
  };
}
