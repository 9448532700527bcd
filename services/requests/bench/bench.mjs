// Benchmarks the requests service directly (no gateway): create and single read with autocannon,
// then write throughput with the outbox relay publishing vs paused. Loopback, local servers.
import { randomBytes } from 'node:crypto';
import { natsNames, newId } from '@support-desk/contracts';
import {
  connectMongo,
  connectNats,
  createLogger,
  createOutboxRelay,
  createPrincipalSigner,
  DEV_INTERNAL_SECRET,
  ensureIndexes,
  ensureStreams,
  serveRpc,
} from '@support-desk/platform';
import autocannon from 'autocannon';
import { buildApp } from '../dist/src/app.js';
import { defaultRequestsConfig } from '../dist/src/config.js';
import { requestModel } from '../dist/src/store/requests.js';
import { slaAlertModel } from '../dist/src/store/sla-alerts.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const suffix = randomBytes(3).toString('hex');
const names = natsNames(`bench${suffix}`);
const logger = createLogger({ service: 'requests-bench', level: 'warn' });
const config = defaultRequestsConfig({ SLA_MONITOR_ENABLED: false });
const conn = await connectMongo({ url: config.MONGO_URL, dbName: `requests_bench_${suffix}` });
const nc = await connectNats({ url: config.NATS_URL, name: 'bench' });
const jsm = await ensureStreams(nc, names);
const relay = createOutboxRelay({ nc, models: [requestModel(conn), slaAlertModel(conn)], logger });
const app = await buildApp({
  config,
  logger: createLogger({ service: 'requests', level: 'error' }),
  conn,
  nc,
  names,
  relay,
});
await ensureIndexes(conn);
relay.start();
const address = await app.listen({ host: '127.0.0.1', port: 0 });
const sign = createPrincipalSigner(DEV_INTERNAL_SECRET, 600);
const principal = {
  userId: newId('user'),
  email: 'bench@example.com',
  name: 'Bench',
  role: 'agent',
  scopes: ['requests:read', 'requests:write', 'users:read'],
  credential: { type: 'api_key', id: newId('apiKey') },
  clientIp: '127.0.0.1',
  userAgent: 'autocannon',
  requestId: newId('event'),
};
// Identity stand-in: the bench user is fetched once over RPC, then served from the read model.
serveRpc(nc, names.rpc.getUser, async ({ id }) =>
  id === principal.userId
    ? {
        found: true,
        user: {
          id,
          email: principal.email,
          name: principal.name,
          role: 'agent',
          status: 'active',
          isVip: false,
          groups: [],
          updatedAt: new Date().toISOString(),
        },
      }
    : { found: false },
);
const headers = { 'x-sd-principal': await sign(principal), 'content-type': 'application/json' };
const body = JSON.stringify({
  title: 'Bench request',
  description: 'Created by the benchmark',
  priority: 'medium',
  tags: ['bench'],
});

const run = (title, opts) =>
  new Promise((resolve, reject) =>
    autocannon(
      { url: address + (opts.path ?? ''), connections: 20, duration: DURATION, headers, ...opts, title },
      (err, r) => (err ? reject(err) : resolve(r)),
    ),
  );
const line = (name, r) =>
  `${name.padEnd(34)} ${Math.round(r.requests.average).toString().padStart(6)} req/s   p99 ${String(r.latency.p99).padStart(4)} ms   non-2xx ${r.non2xx}`;

const results = [];
const created = await run('create', { method: 'POST', path: '/v1/requests', body });
results.push(line('POST /v1/requests (relay on)', created));
const one = await requestModel(conn).findOne({}, { _id: 1 }).lean();
const read = await run('read', { method: 'GET', path: `/v1/requests/${one._id}` });
results.push(line('GET /v1/requests/:id', read));
// FerretDB's writes slow down as a collection grows (an update by _id costs time proportional to the
// collection's size), so both write runs start from an empty collection to compare like with like.
await relay.idle();
await requestModel(conn).deleteMany({});
relay.pause();
const paused = await run('create-paused', { method: 'POST', path: '/v1/requests', body });
results.push(line('POST /v1/requests (relay paused)', paused));
const backlog = await requestModel(conn).countDocuments({ 'outbox.id': { $exists: true } });
const before = relay.stats.published;
const t0 = Date.now();
relay.resume();
// Drain for at most 30 s (bounded), then report the publish rate of the backlog.
await Promise.race([relay.idle(), new Promise((r) => setTimeout(r, 30_000).unref())]);
const secs = (Date.now() - t0) / 1000;
const drained = relay.stats.published - before;
results.push(
  `outbox backlog ${backlog} requests; relay published ${drained} in ${secs.toFixed(1)} s (${Math.round(drained / secs)} events/s)`,
);
console.log(`\nrequests service bench (${DURATION}s per run, 20 connections, loopback, FerretDB + NATS)`);
for (const r of results) console.log(r);

await app.close();
await relay.stop();
await jsm.streams.delete(names.eventsStream).catch(() => undefined);
await jsm.streams.delete(names.noticesStream).catch(() => undefined);
await nc.drain();
await conn.dropDatabase();
await conn.close();
