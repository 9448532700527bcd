// A bulk job of 1,000 requests, followed to its end through a SIGKILL of the requests service:
// the job is stored, the restarted process resumes it once the dead one's lease ends, and every
// item's change lands exactly once (each item carries its request's entity tag, so a change
// applied twice would answer 412 the second time). A private stack: this file kills a service.
import t from 'tap';
import { cast } from '../src/actors.js';
import type { Json } from '../src/http.js';
import { eventually, startStack } from '../src/stack.js';

const COUNT = 1000;
const stack = await startStack(t, {
  env: { BULK_JOB_LEASE_MS: '2000', BULK_JOBS_POLL_MS: '500', SLA_MONITOR_ENABLED: 'false' },
});
const { admin, agent } = await cast(stack);

/** `work` over `items`, `width` at a time. */
async function inBatches<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let from = 0; from < items.length; from += width)
    out.push(...(await Promise.all(items.slice(from, from + width).map(work))));
  return out;
}

t.test('1,000 requests changed in one call, the job followed through a SIGKILL', async (t) => {
  const items = await inBatches(
    Array.from({ length: COUNT }, (_, n) => n),
    25,
    async (n) => {
      const created = await agent.api.post('/v1/requests', {
        title: `${stack.tag} bulk ${n}`,
        description: 'One of a thousand',
        priority: 'low',
      });
      if (created.status !== 201) throw new Error(`create ${n}: ${created.status} ${created.text}`);
      const id = created.json.data.id as string;
      const read = await agent.api.get(`/v1/requests/${id}`);
      return { id, ifMatch: String(read.headers.etag) };
    },
  );
  const budget = Number((await agent.api.get('/v1/me')).headers['x-ratelimit-remaining']);
  const started = await agent.api.post('/v1/requests/bulk', {
    action: 'update',
    items,
    changes: { status: 'in_progress', priority: 'critical' },
  });
  t.equal(started.status, 202, started.text);
  const jobId = started.json.data.id as string;
  t.match(started.json.data, { status: 'running', total: COUNT });
  t.equal(Number(started.headers['x-ratelimit-remaining']), budget - COUNT, 'the call counted once per item');

  const progress = async () => (await agent.api.get(`/v1/jobs/${jobId}`)).json.data as Json;
  const before = await eventually(
    async () => {
      const job = await progress();
      return job.processed >= 20 ? job : undefined;
    },
    { timeoutMs: 120_000, what: 'the job under way' },
  );
  t.ok(before.processed < COUNT, `killed mid-job (${before.processed} of ${COUNT} done)`);
  await stack.restart('requests', 'SIGKILL');

  const done = await eventually(
    async () => {
      const job = await progress();
      return job.status === 'completed' ? job : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 1000, what: 'the job completed after the restart' },
  );
  t.match(done, { processed: COUNT, succeeded: COUNT, failed: 0 }, 'every item once, none refused');
  t.ok(done.completedAt, 'completedAt');

  const last = (await agent.api.get(`/v1/jobs/${jobId}?limit=100&page=10`)).json.data;
  t.same(
    last.results.map((r: Json) => [r.index, r.id, r.status]),
    items.slice(900).map((item, n) => [900 + n, item.id, 'succeeded']),
    'the last page of results, in item order',
  );
  const changed = await agent.api.get(`/v1/requests?requester=${agent.id}&status=in_progress&limit=1`);
  t.equal(changed.json.data.pagination.total, COUNT, 'every request changed');
  // One status change and one priority change per request: no change was applied twice.
  for (const type of ['request.status_changed', 'request.priority_changed']) {
    const counted = await eventually(
      async () => {
        const page = (await admin.api.get(`/v1/events?type=${type}&limit=1`)).json.data.pagination;
        return page.total >= COUNT ? page : undefined;
      },
      { timeoutMs: 60_000, what: `${type} audited` },
    );
    t.same([counted.total, counted.totalCapped], [COUNT, undefined], `${COUNT} ${type} events`);
  }
});
