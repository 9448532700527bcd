/**
 * `npm run bench -- requests`: the requests service directly (no gateway), on loopback against the
 * local store and NATS. Create and single read with autocannon, then write throughput with the
 * outbox relay publishing vs paused, and the drain rate of the backlog the paused run left.
 */
import fs from 'node:fs';
import { natsNames, newId, type Principal } from '@support-desk/contracts';
import { connectMongo } from '@support-desk/platform/service';
import { connectNats, jetstreamApi, provisionStreams } from '@support-desk/platform/messaging';
import { createLogger } from '@support-desk/platform/core';
import { IdentityDouble, testPrincipalKeys, uniqueName } from '@support-desk/platform/testing';
import { createPrincipalSigner } from '@support-desk/platform/core';
import autocannon from 'autocannon';
import { composeService } from '../src/composition.js';
import { loadRequestsConfig } from '../src/config.js';
import { requestModel } from '../src/store/requests.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 20;
const names = natsNames(uniqueName('bench'));
const keys = testPrincipalKeys();
// The store and NATS of the environment (MONGO_URL, NATS_URL, as `npm run bench` sets them).
const config = loadRequestsConfig({
  ...process.env,
  SLA_MONITOR_ENABLED: 'false',
  PRINCIPAL_VERIFY_KEYS: keys.verifyKeys,
});
const conn = await connectMongo({ url: config.MONGO_URL, dbName: uniqueName('requests_bench_') });
const nc = await connectNats({ url: config.NATS_URL, name: 'bench' });
await provisionStreams(nc, names);
const jsm = await jetstreamApi(nc);
const service = await composeService({
  config,
  logger: createLogger({ service: 'requests', level: 'error' }),
  conn,
  nc,
  names,
});
await service.start();
const { app, relay } = service;
const address = await app.listen({ host: '127.0.0.1', port: 0 });

// Identity stand-in on the real NATS: the bench user is fetched once, then served from the read model.
const identity = new IdentityDouble(nc, names);
const stopIdentity = identity.serve();
const { principal } = identity.person('agent');
const bench: Principal = {
  ...principal,
  userAgent: 'autocannon',
  clientIp: '127.0.0.1',
  requestId: newId('event'),
};
const body = JSON.stringify({
  title: 'Bench request',
  description: 'Created by the benchmark',
  priority: 'medium',
  tags: ['bench'],
});

const sign = createPrincipalSigner(keys.signingKey);

async function run(title: string, method: 'GET' | 'POST', path: string, payload?: string) {
  return autocannon({
    url: address,
    connections: CONNECTIONS,
    duration: DURATION,
    title,
    requests: [
      {
        method,
        path,
        ...(payload ? { body: payload } : {}),
        // The gateway signs each call (an assertion is bound to it and its body, and lives
        // seconds): so does the bench.
        setupRequest: (request) => ({
          ...request,
          headers: {
            'content-type': 'application/json',
            'x-sd-principal': sign(bench, { audience: 'requests', method, url: path, body: payload }),
          },
        }),
      },
    ],
  });
}

/** What `npm run bench` puts in its table (written to BENCH_RESULTS_FILE). */
const figures: Record<string, unknown> = { bench: 'requests', seconds: DURATION, connections: CONNECTIONS };
const line = (name: string, key: string, r: autocannon.Result) => {
  figures[key] = {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
  };
  return (
    `${name.padEnd(34)} ${Math.round(r.requests.average).toString().padStart(6)} req/s   ` +
    `p99 ${String(r.latency.p99).padStart(4)} ms   non-2xx ${r.non2xx}`
  );
};

const results: string[] = [];
results.push(
  line('POST /v1/requests (relay on)', 'create', await run('create', 'POST', '/v1/requests', body)),
);
const one = await requestModel(conn).findOne({}, { _id: 1 }).lean();
results.push(line('GET /v1/requests/:id', 'read', await run('read', 'GET', `/v1/requests/${one?._id}`)));
// FerretDB's writes slow down as a collection grows (an update by _id costs time proportional to the
// collection's size), so both write runs start from an empty collection to compare like with like.
await relay.idle();
await requestModel(conn).deleteMany({});
await relay.pause();
results.push(
  line(
    'POST /v1/requests (relay paused)',
    'createRelayPaused',
    await run('create-paused', 'POST', '/v1/requests', body),
  ),
);
const backlog = await requestModel(conn).countDocuments({ 'outbox.id': { $exists: true } });
const before = relay.stats.published;
const t0 = Date.now();
relay.resume();
// Drain for at most 30 s (bounded), then report the publish rate of the backlog.
await Promise.race([relay.idle(), new Promise((r) => setTimeout(r, 30_000).unref())]);
const secs = (Date.now() - t0) / 1000;
const drained = relay.stats.published - before;
results.push(
  `outbox backlog ${backlog} requests; relay published ${drained} in ${secs.toFixed(1)} s ` +
    `(${Math.round(drained / secs)} events/s)`,
);
figures.relayDrain = {
  backlog,
  published: drained,
  seconds: secs,
  eventsPerSecond: Math.round(drained / secs),
};
if (process.env.BENCH_RESULTS_FILE) fs.writeFileSync(process.env.BENCH_RESULTS_FILE, JSON.stringify(figures));
console.log(`\nrequests service bench (${DURATION}s per run, ${CONNECTIONS} connections, loopback)`);
for (const r of results) console.log(r);

await app.close();
await service.close();
stopIdentity();
await jsm.streams.delete(names.eventsStream).catch(() => undefined);
await jsm.streams.delete(names.noticesStream).catch(() => undefined);
await nc.drain();
await conn.dropDatabase();
await conn.close();
