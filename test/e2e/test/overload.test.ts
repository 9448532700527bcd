// test-runner: alone (its latency criteria are about this stack, not a second test file beside it)
// Issue 31's acceptance test, on a private stack (it loads the stack on purpose): with 10,000
// requests stored, one Standard key sends its plan's 60 calls at once (a list, then a search,
// then an export) while another client reads single requests and creates new ones. The other
// client keeps ≥ 99 % success with p99 ≤ 1 s, no service's readiness drops, and every burst call
// ends within 10 s with 2xx, 429 or 503 (the two refusals with Retry-After), the calls admitted
// answering (a search with what it found in its time budget). The timings are the
// issue's own acceptance criteria, the only ones asserted. OVERLOAD_REQUESTS sets the stored count
// (BENCHMARKS.md's figures at 2,500 and 10,000 come from this file's comments).
import t from 'tap';
import { cast, createKey } from '../src/actors.js';
import type { Api, HttpResponse } from '../src/http.js';
import { request } from '../src/http.js';
import { SERVICES, sleep, startStack } from '../src/stack.js';
import { storeCopies, storedRequest } from '../src/store-fill.js';
import { createRequest } from '../src/world.js';

const STORED = Number(process.env.OVERLOAD_REQUESTS ?? 10_000);
const BURST = 60; // a Standard key's calls in a minute
const BURST_DEADLINE_MS = 10_000;

const stack = await startStack(t, { private: true });
const { admin, agent } = await cast(stack);

/** `STORED` requests straight into the store, copies of one made through the API. */
async function storeRequests() {
  const model = await createRequest(t, agent.api, { title: 'Overload template' });
  const now = Date.now();
  return storeCopies(stack, 'requests', 'requests', model.id, STORED, (n) =>
    storedRequest(n, new Date(now - (STORED - n) * 60_000)),
  );
}

interface Timed {
  what?: string;
  status: number;
  ms: number;
  retryAfter: string | undefined;
}
const timed = async (call: () => Promise<HttpResponse>): Promise<Timed> => {
  const start = performance.now();
  try {
    const res = await call();
    const retry = res.headers['retry-after'];
    return {
      status: res.status,
      ms: performance.now() - start,
      retryAfter: Array.isArray(retry) ? retry[0] : retry,
    };
  } catch {
    return { status: 0, ms: performance.now() - start, retryAfter: undefined };
  }
};
const p99 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
};

/**
 * The other client and the readiness polls while `burst` runs (and 1 s on each side): a single
 * read every 100 ms and a create every 500 ms, each service's /readyz every 250 ms. Bounded: at
 * most 60 s of traffic.
 */
async function duringBurst(stored: string[], burst: () => Promise<Timed[]>) {
  const other: Timed[] = [];
  const readiness: { service: string; status: number }[] = [];
  let running = true;
  const until = Date.now() + 60_000;
  const reads = (async () => {
    for (let n = 0; running && Date.now() < until; n++) {
      const id = stored[(n * 7919) % stored.length];
      void timed(() => agent.api.get(`/v1/requests/${id}`)).then((r) => other.push({ ...r, what: 'read' }));
      if (n % 5 === 0)
        void timed(() =>
          agent.api.post('/v1/requests', {
            title: `Beside the burst ${n}`,
            description: 'Made while a Standard key bursts.',
            priority: 'low',
          }),
        ).then((r) => other.push({ ...r, what: 'create' }));
      await sleep(100);
    }
  })();
  const polls = (async () => {
    while (running && Date.now() < until) {
      await Promise.all(
        SERVICES.map(async (service) => {
          const res = await request(`http://127.0.0.1:${stack.ports[service]}/readyz`).catch(() => ({
            status: 0,
          }));
          readiness.push({ service, status: res.status });
        }),
      );
      await sleep(250);
    }
  })();
  await sleep(1000);
  const answers = await burst();
  await sleep(1000);
  running = false;
  await Promise.all([reads, polls]);
  await sleep(1500); // the last calls in flight
  return { answers, other, readiness };
}

const burstOf = (api: Api, path: string) => () =>
  Promise.all(
    Array.from({ length: BURST }, () =>
      timed(() => api.get(path, { headers: { accept: 'application/x-ndjson, application/json' } })),
    ),
  );

const cases: [string, () => Promise<Api>, string][] = [
  [
    'list',
    async () =>
      stack.api(
        (await createKey(stack, agent.email, ['requests:read'], ['--plan', 'standard'], 'burst-list')).key,
      ),
    '/v1/requests?status=open&priority=high&limit=20',
  ],
  [
    'search',
    async () =>
      stack.api(
        (await createKey(stack, agent.email, ['requests:read'], ['--plan', 'standard'], 'burst-search')).key,
      ),
    '/v1/requests?q=printer&limit=20',
  ],
  [
    'export',
    async () =>
      stack.api((await createKey(stack, admin.email, ['admin'], ['--plan', 'standard'], 'burst-export')).key),
    '/v1/events/export',
  ],
];

t.test(`bursts beside another client at ${STORED} stored requests`, async (t) => {
  const stored = await storeRequests();
  for (const [name, keyFor, path] of cases) {
    await t.test(`a Standard key's ${name} burst at ${STORED} stored requests`, async (t) => {
      const api = await keyFor();
      const { answers, other, readiness } = await duringBurst(stored, burstOf(api, path));

      const slow = answers.filter((a) => a.ms > BURST_DEADLINE_MS);
      const wrong = answers.filter(
        (a) => !(a.status >= 200 && a.status < 300) && ![429, 503].includes(a.status),
      );
      const bare = answers.filter((a) => [429, 503].includes(a.status) && !a.retryAfter);
      t.equal(answers.length, BURST, `${BURST} burst calls`);
      t.same(
        slow.map((a) => Math.round(a.ms)),
        [],
        `every burst call ends within ${BURST_DEADLINE_MS} ms`,
      );
      t.same(
        wrong.map((a) => a.status),
        [],
        'every burst call: 2xx, 429 or 503',
      );
      t.same(
        bare.map((a) => a.status),
        [],
        'every 429 and 503 carries Retry-After',
      );
      // The calls admitted answer: a search reads for its time budget and answers what it found
      // (with a cursor to go on), it does not run out of time.
      t.ok(
        answers.some((a) => a.status >= 200 && a.status < 300),
        `the ${name} burst's admitted calls answer (2xx)`,
      );

      const ok = other.filter((o) => o.status === 200 || o.status === 201);
      const failed = other.filter((o) => o.status !== 200 && o.status !== 201).map((o) => o.status);
      const success = ok.length / Math.max(1, other.length);
      t.ok(other.length >= 20, `the other client made ${other.length} calls`);
      t.ok(success >= 0.99, `the other client's success: ${(success * 100).toFixed(1)} % (≥ 99 %)`, {
        failed,
      });
      const otherP99 = p99(other.map((o) => o.ms));
      const slowest = [...other].sort((a, b) => b.ms - a.ms).slice(0, 3);
      t.ok(otherP99 <= 1000, `the other client's p99: ${Math.round(otherP99)} ms (≤ 1 s)`, { slowest });
      const drops = readiness.filter((r) => r.status !== 200);
      t.same(drops, [], `readiness never drops (${readiness.length} polls)`);

      const count = (s: number) => answers.filter((a) => a.status === s).length;
      t.comment(
        `${name} burst at ${STORED}: slowest ${Math.round(Math.max(...answers.map((a) => a.ms)))} ms; ` +
          `2xx ${answers.filter((a) => a.status < 300).length}, 429 ${count(429)}, 503 ${count(503)}; ` +
          `other client ${other.length} calls, ${(success * 100).toFixed(1)} % ok, p99 ${Math.round(otherP99)} ms; ` +
          `readiness drops ${drops.length}/${readiness.length}`,
      );
    });
  }
});
