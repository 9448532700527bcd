/**
 * `npm run bench -- e2e`: the whole stack as `npm start` runs it (identity, requests, audit and the
 * gateway as separate processes, on private ports, databases and NATS namespace against the shared
 * infrastructure), measured through the gateway with an agent's API key, as a client sees it.
 *
 * After a few hundred requests are filed (some with long descriptions: the store's cost grows with
 * the collection), it measures single reads, lists with filters, updates spread over every request
 * and creates, each at full load (32 connections) and then at half that rate for the latency, and
 * after each of them its conditional variant at full load (conditional.ts: If-None-Match, If-Match,
 * Idempotency-Key), so one run says what those headers cost.
 * BENCH_SECONDS (default 10) per run; BENCH_PREFILL (default 300) requests filed first.
 * BENCH_CLUSTER=1 runs the same stack on clustered engines (issue 36): a private three-server
 * JetStream cluster with the streams at three replicas and a private Redis Cluster (three
 * primaries, one replica each), to compare with the single-node run on the same machine. Results go
 * to BENCH_RESULTS_FILE as JSON when it is set (scripts/bench.mjs prints them in one table).
 * Each run's cost is measured too (`processMeter`, libs/platform's testing): CPU-milliseconds per answered call in every
 * service and engine, the outbox's catch-up after it included, and each process's resident memory
 * at the end — the figures docs/capacity.md reasons from.
 */
import { connectMongo } from '@support-desk/platform/service';
import fs from 'node:fs';
import {
  cpuSecondsBetween,
  processMeter,
  type Reading,
  startPrivateNatsCluster,
  startPrivateRedisCluster,
} from '@support-desk/platform/testing';
import { createActor } from '../src/actors.js';
import type { Api } from '../src/http.js';
import { request } from '../src/http.js';
import { ROOT, SHARED_STACK_ENV, type Stack, startStack, type Teardownable } from '../src/stack.js';
import { createWithKey, currentTags, readIfNoneMatch, updateIfMatch } from './conditional.js';
import {
  CONNECTIONS,
  type CallShape,
  describeRun,
  load,
  type PhaseFigures,
  phase,
  type RunFigures,
} from './load.js';
import { teardowns } from './teardowns.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PREFILL = Number(process.env.BENCH_PREFILL ?? 300);
const PREFILL_CONCURRENCY = 8;
/** Bounds of the preparation, so a slow store cannot stretch the bench without limit. */
const PREFILL_DEADLINE_MS = 120_000;
/**
 * A writing run's outbox catch-up: a 10 s burst of creates leaves the relay about 35 s of
 * publishing on this machine (it publishes about 165 events/s while 700 creates/s come in, 380/s
 * after), and the per-call CPU figures include that catch-up.
 */
const SETTLE_DEADLINE_MS = 120_000;
/** A key that never meets its limits: the bench measures the stack, not the rate limiter's refusals. */
const BENCH_KEY = ['--plan', 'enterprise', '--rate-limit', '1000000', '--events-rate-limit', '1000000'];
const PRIORITIES = ['critical', 'high', 'medium', 'low'] as const;
/** About 15 KB (the limit is 20 000 characters): a long report pasted into a request. */
const LONG_DESCRIPTION = Array.from(
  { length: 150 },
  (_, n) => `Line ${n + 1}: the export job stopped again with the same error after the retry. `,
).join('\n');

/** Files `count` requests, `PREFILL_CONCURRENCY` at a time, within the deadline; returns their ids. */
async function prefill(api: Api, agentId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  const deadline = Date.now() + PREFILL_DEADLINE_MS;
  let next = 0;
  const worker = async () => {
    while (next < count && Date.now() < deadline) {
      const i = next++;
      const res = await api.post('/v1/requests', {
        title: `Bench request ${i}`,
        description: i % 4 === 0 ? LONG_DESCRIPTION : 'The printer on floor 3 is jammed again.',
        priority: PRIORITIES[i % PRIORITIES.length],
        // A third is created assigned, so the list filters find two statuses.
        ...(i % 3 === 0 ? { assignedTo: agentId } : {}),
        tags: ['bench'],
      });
      if (res.status !== 201)
        throw new Error(`prefill: POST /v1/requests ${res.status} ${res.text.slice(0, 300)}`);
      ids.push(res.json.data.id);
    }
  };
  await Promise.all(Array.from({ length: PREFILL_CONCURRENCY }, worker));
  return ids;
}

/** Requests in the store, counted there: a list's `total` stops at 1,000 (`totalCapped`). */
async function countRequests(stack: Stack): Promise<number> {
  const conn = await connectMongo({ url: stack.env.MONGO_URL, dbName: `${stack.run}_requests` });
  try {
    return await conn.db!.collection('requests').countDocuments({});
  } finally {
    await conn.close();
  }
}

/**
 * Waits (bounded) until the requests service's outbox relay has published what the last phase
 * wrote, so each phase starts on a quiet stack instead of competing with the previous one's
 * backlog. Returns the seconds waited.
 */
async function settle(stack: Stack): Promise<number> {
  const started = Date.now();
  const metrics = `${stack.metricsOrigins.requests}/metrics`;
  // The gauge counts the entries of the relay's current pass, which can read 0 between two
  // passes of a backlog: quiet only when two reads 250 ms apart say so.
  let quietReads = 0;
  while (Date.now() - started < SETTLE_DEADLINE_MS && quietReads < 2) {
    const text = (await request(metrics, { timeoutMs: 5000 }).catch(() => null))?.text ?? '';
    const pending = [...text.matchAll(/^outbox_backlog_entries\{[^}]*\} (\d+)/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
    quietReads = text && pending === 0 ? quietReads + 1 : 0;
    await new Promise((r) => setTimeout(r, 250));
  }
  return (Date.now() - started) / 1000;
}

/** The sum of a metric's series whose labels match `labels` (a regex over the `{…}` part). */
async function metricSum(origin: string, name: string, labels = /.*/): Promise<number> {
  const text = (await request(`${origin}/metrics`, { timeoutMs: 5000 }).catch(() => null))?.text ?? '';
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm')))
    if (labels.test(m[1] ?? '')) sum += Number(m[2]);
  return sum;
}

/**
 * Event ingestion of a writing run: what the requests service's relay published for it and how
 * long after the run audit had taken all of it (bounded), so the events per second from the
 * run's start to audit's last one (the runs' average rate when audit keeps up).
 */
async function ingestion(stack: Stack, run: () => Promise<unknown>) {
  const published = () => metricSum(stack.metricsOrigins.requests, 'outbox_published_total');
  const ingested = () => metricSum(stack.metricsOrigins.audit, 'consumer_messages_total', /outcome="acked"/);
  const [published0, ingested0] = await Promise.all([published(), ingested()]);
  const started = Date.now();
  await run();
  const ran = Date.now();
  await settle(stack); // the relay has published everything the run wrote
  let events = (await published()) - published0;
  let taken = (await ingested()) - ingested0;
  const settled = Date.now();
  while (!(events > 0 && taken >= events) && Date.now() - settled < SETTLE_DEADLINE_MS) {
    await new Promise((r) => setTimeout(r, 250));
    events = (await published()) - published0;
    taken = (await ingested()) - ingested0;
  }
  const seconds = (Date.now() - started) / 1000;
  return {
    published: events,
    ingestedByAudit: taken,
    auditCaughtUpSeconds: (Date.now() - ran) / 1000,
    eventsPerSecond: Math.round(taken / seconds),
  };
}

/** Private NATS and Redis clusters, and the environment that points a stack at them. */
async function clusteredEngines(cleanup: Teardownable): Promise<Record<string, string>> {
  // The cluster flags need the pinned release, which npm test and npm run bench export.
  if (!process.env.NATS_SERVER_BIN)
    throw new Error(
      'BENCH_CLUSTER=1 needs NATS_SERVER_BIN: the pinned nats-server (~/.cache/support-desk/nats-server/<version>/nats-server)',
    );
  const nats = await startPrivateNatsCluster(cleanup);
  const redis = await startPrivateRedisCluster(cleanup);
  console.log('clustered engines: NATS JetStream ×3 (streams R3), Redis Cluster 3 primaries + 3 replicas');
  return {
    NATS_URL: nats.url,
    NATS_STREAM_REPLICAS: '3',
    REDIS_URL: `redis://${redis.nodes.split(',')[0]}`,
    REDIS_CLUSTER_NODES: redis.nodes,
  };
}

/** CPU-milliseconds per call by process group between two readings (docs/capacity.md). */
function costPerCall(before: Reading, after: Reading, calls: number): Record<string, number> {
  return Object.fromEntries(
    cpuSecondsBetween(before, after).map(([group, seconds]) => [
      group,
      Math.round((seconds * 1000 * 100) / Math.max(1, calls)) / 100,
    ]),
  );
}

const callsOf = (f: RunFigures | PhaseFigures): number =>
  'atMax' in f ? f.atMax.calls + f.atHalf.calls : f.calls;

async function main() {
  const started = Date.now();
  const cleanup = teardowns();
  const stopOnSignal = () => void cleanup.run().finally(() => process.exit(130));
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    // Throughput of each path, not admission: one key's 32 connections are not capped, nor lists.
    const stack = await startStack(cleanup, {
      env: {
        ...SHARED_STACK_ENV,
        CREDENTIAL_CONCURRENCY: '0',
        LIST_CONCURRENCY: '1000',
        ...(process.env.BENCH_CLUSTER === '1' ? await clusteredEngines(cleanup) : {}),
      },
    });
    const adminEmail = `bench-admin.${stack.run}@example.com`;
    await stack.deskctlJson(['bootstrap', '--email', adminEmail, '--name', 'Bench Admin']);
    const agent = await createActor(stack, 'agent', 'bench-agent', { keyArgs: BENCH_KEY });
    const stackSeconds = (Date.now() - started) / 1000;
    console.log(`stack ${stack.run} up in ${stackSeconds.toFixed(1)} s at ${stack.origin}`);

    const prefillStarted = Date.now();
    const ids = await prefill(agent.api, agent.id, PREFILL);
    const prefillSeconds = (Date.now() - prefillStarted) / 1000;
    console.log(`prefill: ${ids.length} requests in ${prefillSeconds.toFixed(1)} s`);
    const documentsBefore = await countRequests(stack);
    const settled: Record<string, number> = { prefill: await settle(stack) };

    let n = 0;
    const pick = () => ids[n++ % ids.length];
    const read: CallShape = { method: 'GET', next: () => ({ path: `/v1/requests/${pick()}` }) };
    const list: CallShape = {
      method: 'GET',
      next: () => {
        const k = n++;
        return {
          path: `/v1/requests?status=${k % 2 ? 'open' : 'assigned'}&priority=${PRIORITIES[k % 4]}`,
        };
      },
    };
    const update: CallShape = {
      method: 'PATCH',
      next: () => ({ path: `/v1/requests/${pick()}`, body: JSON.stringify({ title: `Bench update ${n}` }) }),
    };
    const createBody = () =>
      JSON.stringify({
        title: `Bench create ${n++}`,
        description: 'Created by the stack bench.',
        priority: PRIORITIES[n % 4],
      });
    const create: CallShape = { method: 'POST', next: () => ({ path: '/v1/requests', body: createBody() }) };

    // An uncounted warm-up: the processes' first seconds are slower while the JIT settles.
    await load(stack.origin, agent.key, read, Math.min(3, SECONDS));
    const meter = processMeter(ROOT);
    const cost: Record<string, Record<string, number>> = {};
    /** Runs `run`, then (for writes) waits for the outbox: the events' handling is the call's cost too. */
    const metered = async <F extends RunFigures | PhaseFigures>(
      name: string,
      run: () => Promise<F>,
      writes: boolean,
    ): Promise<F> => {
      const before = meter.read();
      const figures = await run();
      if (writes) settled[name] = await settle(stack);
      cost[name] = costPerCall(before, meter.read(), callsOf(figures));
      return figures;
    };
    // Reads first, writes last: creates grow the collection the other runs would see.
    // Each conditional run (at max) follows the plain run it is compared with.
    const readFigures = await metered('read', () => phase(stack.origin, agent.key, read, SECONDS), false);
    const readTags = await currentTags(agent.api, ids);
    const notModified = await load(stack.origin, agent.key, readIfNoneMatch(readTags, pick), SECONDS);
    // The run measures 304s only while the tags read just before it hold: had they changed (a
    // running SLA clock's countdown changed them every second until it left the tag), it would
    // measure full reads under the 304 run's name.
    const answered304 = notModified.statuses['304'] ?? 0;
    if (answered304 < notModified.calls * 0.9)
      throw new Error(
        `If-None-Match run: ${answered304} of ${notModified.calls} answers were 304; the tags read just before no longer match`,
      );
    const listFigures = await metered('list', () => load(stack.origin, agent.key, list, SECONDS), false);
    const updateFigures = await metered(
      'update',
      () => phase(stack.origin, agent.key, update, SECONDS),
      true,
    );
    const updateTags = await currentTags(agent.api, ids);
    const ifMatch = await load(stack.origin, agent.key, updateIfMatch(updateTags, pick), SECONDS);
    settled.ifMatch = await settle(stack);
    let events: Awaited<ReturnType<typeof ingestion>> | undefined;
    const createFigures = await metered(
      'create',
      async () => {
        let figures: PhaseFigures | undefined;
        events = await ingestion(stack, async () => {
          figures = await phase(stack.origin, agent.key, create, SECONDS);
        });
        return figures!;
      },
      true,
    );
    const idempotent = await load(stack.origin, agent.key, createWithKey(createBody), SECONDS);
    settled.idempotent = await settle(stack);
    const documentsAfter = await countRequests(stack);
    const memoryMb = Object.fromEntries(
      [...meter.read().rssBytes].map(([group, bytes]) => [group, Math.round(bytes / 2 ** 20)]),
    );

    const results = {
      bench: process.env.BENCH_CLUSTER === '1' ? 'stack-clustered' : 'stack',
      seconds: SECONDS,
      connections: CONNECTIONS,
      prefill: { requests: ids.length, longDescriptions: Math.ceil(ids.length / 4), seconds: prefillSeconds },
      documents: { before: documentsBefore, after: documentsAfter },
      read: readFigures,
      list: listFigures,
      update: updateFigures,
      create: createFigures,
      /** The conditional calls at max, each next to its plain run's `atMax`. */
      conditional: { readIfNoneMatch: notModified, updateIfMatch: ifMatch, createWithKey: idempotent },
      /** Seconds waited for the outbox relay to catch up after each writing phase (bounded). */
      settled,
      /** CPU-ms per answered call, per process group, for each metered run (outbox catch-up included). */
      cpuMsPerCall: cost,
      /** The create runs' events: published by the relay, taken by audit, and how fast. */
      events,
      /** Resident memory per process group at the end, MiB. */
      memoryMb,
      stackSeconds,
      totalSeconds: (Date.now() - started) / 1000,
    };
    console.log(`\nstack bench through the gateway (${SECONDS} s per run, ${CONNECTIONS} connections)`);
    console.log(`requests in the store: ${documentsBefore} before the runs, ${documentsAfter} after`);
    for (const [name, p] of [
      ['GET /v1/requests/:id (single read)', readFigures],
      ['PATCH /v1/requests/:id (update)', updateFigures],
      ['POST /v1/requests (create)', createFigures],
    ] as const) {
      console.log(describeRun(name, p.atMax));
      console.log(describeRun(`${name} at 50 %`, p.atHalf, p.halfRate));
    }
    console.log(describeRun('GET /v1/requests?status&priority (list)', listFigures));
    console.log(describeRun('GET /v1/requests/:id If-None-Match (304)', notModified));
    console.log(describeRun('PATCH /v1/requests/:id If-Match', ifMatch));
    console.log(describeRun('POST /v1/requests Idempotency-Key', idempotent));
    console.log(
      `events of the create runs: ${events?.published} published, ${events?.ingestedByAudit} taken by audit` +
        ` ${events?.auditCaughtUpSeconds.toFixed(1)} s after the runs (${events?.eventsPerSecond} events/s end to end)`,
    );
    console.log('\nCPU-milliseconds per call by process (the outbox catch-up after writes included)');
    console.table(cost);
    console.log('resident memory at the end, MiB');
    console.table(memoryMb);
    if (process.env.BENCH_RESULTS_FILE)
      fs.writeFileSync(process.env.BENCH_RESULTS_FILE, JSON.stringify(results));
  } finally {
    const stopping = Date.now();
    await cleanup.run();
    console.log(`stack stopped in ${((Date.now() - stopping) / 1000).toFixed(1)} s`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
