import { request } from 'undici';
import type { Logger } from '@support-desk/platform/core';

/** What a health monitor steers: undici's BalancedPool membership. */
interface Balanced {
  upstreams: string[];
  addUpstream(origin: string): unknown;
  removeUpstream(origin: string): unknown;
}

/**
 * Keeps draining and dead replicas out of rotation. Every `intervalMs` it asks each replica's
 * `/readyz` (a service turns it 503 the moment it starts shutting down, and keeps serving for
 * SHUTDOWN_DRAIN_MS), and takes a replica that does not answer 200 out of every BalancedPool of
 * that service, putting it back once it does; the last replica is never taken out. So a rolling
 * restart sends no new call to a replica about to close. Only lists of several replicas are
 * watched: a single URL is a Kubernetes Service, whose endpoints do this job.
 */
export function createUpstreamHealth({ intervalMs, logger }: { intervalMs: number; logger: Logger }) {
  const pools = new Map<string, { origins: string[]; members: Set<Balanced> }>();
  const down = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  const ready = async (origin: string) => {
    try {
      const res = await request(`${origin}/readyz`, { headersTimeout: intervalMs, bodyTimeout: intervalMs });
      await res.body.dump();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  };

  const check = async () => {
    // Every replica of every service at once: a pass takes one probe's time, well inside a drain.
    const entries = [...pools];
    const probed = await Promise.all(
      entries.map(([, { origins }]) => Promise.all(origins.map(async (o) => [o, await ready(o)] as const))),
    );
    for (const [i, [service, { members }]] of entries.entries()) {
      const states = probed[i];
      const healthy = states.filter(([, ok]) => ok).map(([o]) => o);
      for (const [origin, ok] of states) {
        // Never leave a service with no replica: then calls fail (and answer 502) on their own.
        const out = !ok && healthy.length > 0;
        if (out && !down.has(origin)) {
          down.add(origin);
          logger.warn({ service, origin }, 'replica not ready; out of rotation');
        } else if (!out && down.has(origin)) {
          down.delete(origin);
          logger.info({ service, origin }, 'replica ready; back in rotation');
        }
        for (const pool of members) {
          const member = pool.upstreams.includes(origin);
          if (out && member) pool.removeUpstream(origin);
          if (!out && !member) pool.addUpstream(origin);
        }
      }
    }
  };

  return {
    /** Watches `origins` (a service's replicas) for this pool. */
    watch(service: string, origins: string[], pool: Balanced) {
      const entry = pools.get(service) ?? { origins, members: new Set<Balanced>() };
      entry.members.add(pool);
      pools.set(service, entry);
    },
    start() {
      if (timer || intervalMs <= 0) return;
      let running = false;
      timer = setInterval(() => {
        if (running) return;
        running = true;
        void check().finally(() => (running = false));
      }, intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

export type UpstreamHealth = ReturnType<typeof createUpstreamHealth>;
