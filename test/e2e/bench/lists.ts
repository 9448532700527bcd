/**
 * `npm run bench -- --script=bench:lists e2e` (issue 31/37): every list through the gateway as the
 * store grows to 1,000, 10,000 and 50,000 items (BENCH_LIST_SIZES) of each kind: requests, users,
 * events, one webhook's deliveries (BENCH_LISTS=requests: only the requests lists; several
 * separated by commas). Items are stored in bulk straight into
 * the store (copies of one made through the API), so the sizes take seconds, not hours. For each
 * size and list, filtered pages (one value, several, a search, another sort), the unfiltered
 * first page and a cursor page, each called by BENCH_CONNECTIONS clients (default 4), one call
 * after another, for BENCH_SECONDS (default 5): answers per second and p50. Lists, searches and
 * keys are not capped here (LIST_CONCURRENCY, SEARCH_CONCURRENCY, CREDENTIAL_CONCURRENCY): the
 * bench measures what a list costs, not the shedding.
 */
import { EVENT_TYPES } from '@support-desk/contracts';
import fs from 'node:fs';
import { startReceiver } from '@support-desk/platform/testing';
import { createActor } from '../src/actors.js';
import type { Api } from '../src/http.js';
import { eventually, SHARED_STACK_ENV, startStack } from '../src/stack.js';
import { storedDelivery, storedEvent, storeCopies, storedRequest, storedUser } from '../src/store-fill.js';
import { teardowns } from './teardowns.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SIZES = (process.env.BENCH_LIST_SIZES ?? '1000,10000,50000').split(',').map(Number);
/** Only the lists whose name starts with one of these (`requests`, `users`, `events`, `deliveries`). */
const ONLY = (process.env.BENCH_LISTS ?? '').split(',');
const wanted = (list: string) => ONLY.some((prefix) => list.startsWith(prefix));
/** Few connections: a list costs the store far more than a single read, and the machine has 2 cores. */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const BENCH_KEY = ['--plan', 'enterprise', '--rate-limit', '1000000', '--events-rate-limit', '1000000'];

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  calls: number;
  failed: number;
  statuses: number[];
}

/**
 * `CONNECTIONS` clients, each calling `path` one call after another for `SECONDS` (bounded: no
 * new call after that, each call bounded by the gateway's deadline): answers per second and the
 * latency of each. Not autocannon: on a loaded 2-core machine a list may take longer than a whole
 * autocannon window, which then counts nothing.
 */
async function clients(api: Api, path: string): Promise<Figures> {
  const latencies: number[] = [];
  const statuses: number[] = [];
  const started = performance.now();
  const until = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const res = await api.get(path);
        latencies.push(performance.now() - t0);
        statuses.push(res.status);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)] ?? 0);
  const failed = statuses.filter((s) => s !== 200);
  return {
    rps: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    calls: latencies.length,
    failed: failed.length,
    statuses: [...new Set(failed)],
  };
}

async function main() {
  const cleanup = teardowns();
  try {
    const stack = await startStack(cleanup, {
      env: {
        ...SHARED_STACK_ENV,
        CREDENTIAL_CONCURRENCY: '0',
        LIST_CONCURRENCY: '1000',
        SEARCH_CONCURRENCY: '1000',
      },
    });
    await stack.deskctlJson([
      'bootstrap',
      '--email',
      `bench-admin.${stack.run}@example.com`,
      '--name',
      'Admin',
    ]);
    const admin = await createActor(stack, 'admin', 'bench-admin2', { keyArgs: BENCH_KEY });
    const template = (
      await admin.api.post('/v1/requests', { title: 'Template', description: 'x', priority: 'low' })
    ).json.data.id as string;
    // The event copied is the bench admin's creation (by the bootstrap admin): `events?userId` of the
    // bench admin then matches its own few events in every run, not, by the audit log's timing,
    // sometimes the copies too.
    const someEvent = await eventually(async () => {
      const res = await admin.api.get(`/v1/events?type=user.created&resourceId=${admin.id}&limit=1`);
      return res.json?.data?.events?.[0]?.id as string | undefined;
    });
    // A subscription with one delivery (a ping to a loopback receiver) to copy.
    const { url } = await startReceiver(cleanup);
    const webhook = (
      await admin.api.post('/v1/webhooks', { url, events: ['request.*'], description: 'bench' })
    ).json.data.id as string;
    await admin.api.post(`/v1/webhooks/${webhook}/ping`, {});
    const someDelivery = (await admin.api.get(`/v1/webhooks/${webhook}/deliveries?limit=1`)).json.data
      .deliveries[0].id as string;
    const now = Date.now();
    let stored = 0;
    const results: Record<string, Figures> = {};
    for (const size of SIZES) {
      const add = size - stored;
      const fillStarted = Date.now();
      const at = (n: number) => new Date(now - (size * 2 - n) * 60_000);
      const fill = (list: string, run: () => Promise<unknown>) => (wanted(list) ? run() : undefined);
      await fill('requests', () =>
        storeCopies(stack, 'requests', 'requests', template, add, (k) =>
          storedRequest(stored + k, at(stored + k)),
        ),
      );
      await fill('deliveries', () =>
        storeCopies(stack, 'webhooks', 'deliveries', someDelivery, add, (k) =>
          storedDelivery(stored + k, at(stored + k)),
        ),
      );
      await fill('users', () =>
        storeCopies(stack, 'identity', 'users', admin.id, add, (k) =>
          storedUser(stored + k, at(stored + k), stack.run),
        ),
      );
      await fill('events', () =>
        storeCopies(stack, 'audit', 'events', someEvent, add, (k) => {
          const n = stored + k;
          return storedEvent(EVENT_TYPES[n % EVENT_TYPES.length]!, at(n));
        }),
      );
      stored = size;
      console.log(
        `stored ${size} of each in ${((Date.now() - fillStarted) / 1000).toFixed(1)} s (added ${add})`,
      );
      const cursorOf = async (path: string) =>
        ((await admin.api.get(path)).json?.data?.pagination?.nextCursor as string | undefined) ?? 'none';
      const lists: [string, string][] = [
        ['requests?status=open&priority=high', '/v1/requests?status=open&priority=high&limit=20'],
        ['requests (no filter)', '/v1/requests?limit=20'],
        ['requests?status=open,pending', '/v1/requests?status=open,pending&limit=20'],
        ['requests?q=request 7', '/v1/requests?q=request%207&limit=20'],
        ['requests?sort=-updatedAt', '/v1/requests?sort=-updatedAt&limit=20'],
        [
          'requests?status=open cursor',
          `/v1/requests?status=open&limit=20&cursor=${await cursorOf('/v1/requests?status=open&limit=20')}`,
        ],
        ['users?role=agent', '/v1/users?role=agent&limit=20'],
        ['users (no filter)', '/v1/users?limit=20'],
        ['users?sort=name', '/v1/users?sort=name&limit=20'],
        ['users?q=stored', '/v1/users?q=stored&limit=20'],
        [
          'users?role=agent cursor',
          `/v1/users?role=agent&limit=20&cursor=${await cursorOf('/v1/users?role=agent&limit=20')}`,
        ],
        ['events?type=user.created', '/v1/events?type=user.created&limit=20'],
        ['events (no filter)', '/v1/events?limit=20'],
        ['events?userId', `/v1/events?userId=${admin.id}&limit=20`],
        ['events cursor', `/v1/events?limit=20&cursor=${await cursorOf('/v1/events?limit=20')}`],
        ['deliveries (no filter)', `/v1/webhooks/${webhook}/deliveries?limit=20`],
        ['deliveries?status=failed', `/v1/webhooks/${webhook}/deliveries?status=failed&limit=20`],
        [
          'deliveries cursor',
          `/v1/webhooks/${webhook}/deliveries?limit=20&cursor=${await cursorOf(`/v1/webhooks/${webhook}/deliveries?limit=20`)}`,
        ],
      ];
      for (const [name, path] of lists.filter(([n]) => wanted(n))) {
        // The calls a previous run left in flight end first.
        await new Promise((r) => setTimeout(r, 1000));
        const figures = await clients(admin.api, path);
        results[`${name} @${size}`] = figures;
        console.log(
          `${`${name} @${size}`.padEnd(44)} ${figures.rps.toFixed(1).padStart(6)} req/s  p50 ${String(figures.p50).padStart(5)} ms  ` +
            `p99 ${String(figures.p99).padStart(5)} ms  ${figures.calls} calls` +
            (figures.failed ? `  (${figures.failed} not 200: ${figures.statuses.join(' ')})` : ''),
        );
      }
    }
    if (process.env.BENCH_RESULTS_FILE)
      fs.writeFileSync(process.env.BENCH_RESULTS_FILE, JSON.stringify(results));
  } finally {
    await cleanup.run();
  }
}

await main();
