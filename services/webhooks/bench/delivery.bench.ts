// Delivery benchmark: N events (each on its own resource, so lanes run side by side) published to
// a fresh namespace on the real NATS, delivered by K webhooks processes (`dist/src/server.js`,
// production settings except loopback allowed) to a receiver on loopback that answers at once
// or after 200 ms; time from the first publish until every delivery is `succeeded`.
//
//   npm run bench -w @support-desk/webhooks      (BENCH_WEBHOOK_EVENTS=2000, 600 for the slow receiver)
//
// BENCH_WEBHOOK_SLOW_EVENTS=0 skips the slow receiver; BENCH_WEBHOOK_REPLICAS=1,2 (the default)
// says which replica counts run; BENCH_WEBHOOK_SERVER runs another build's server (e.g. main's, in
// a worktree of its own) for a before-and-after on the same machine.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { jetstream } from '@nats-io/jetstream';
import { natsNames, newId } from '@support-desk/contracts';
import { connectMongo, ensureIndexes } from '@support-desk/platform/service';
import { connectNats, encodeJson, jetstreamApi, provisionStreams } from '@support-desk/platform/messaging';
import {
  freePort,
  producerOf,
  testPrincipalKeys,
  testSigner,
  uniqueName,
} from '@support-desk/platform/testing';
import { event } from '../test/helpers.js';
import { deliveryModel } from '../src/store/deliveries.js';
import { createSubscriptionsRepository, subscriptionModel } from '../src/store/subscriptions.js';
import { createSecretBox } from '../src/use-cases/secrets.js';

const SERVER =
  process.env.BENCH_WEBHOOK_SERVER ?? fileURLToPath(new URL('../src/server.js', import.meta.url));
const MONGO_URL = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27027';
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4223';
const FAST_N = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);
const SLOW_N = Number(process.env.BENCH_WEBHOOK_SLOW_EVENTS ?? 600);
const REPLICAS = (process.env.BENCH_WEBHOOK_REPLICAS ?? '1,2').split(',').map(Number);
const TIMEOUT_MS = 180_000;

/** CPU-seconds a replica used (user + system, from /proc: Linux only; null elsewhere). */
function cpuSecondsOf(child: ChildProcess): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are the stat file's 14th and 15th fields, in clock ticks (100 a second).
    return +((Number(fields[11]) + Number(fields[12])) / 100).toFixed(2);
  } catch {
    return null;
  }
}

async function startReceiver(delayMs: number) {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      setTimeout(() => res.writeHead(204).end(), delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function run(label: string, replicas: number, delayMs: number, n: number) {
  const names = natsNames(uniqueName('whbench'));
  const dbName = uniqueName('webhooks_bench_');
  const key = randomBytes(32).toString('base64');
  const conn = await connectMongo({ url: MONGO_URL, dbName });
  const nc = await connectNats({ url: NATS_URL, name: 'webhooks-bench' });
  await provisionStreams(nc, names);
  const jsm = await jetstreamApi(nc);
  subscriptionModel(conn);
  deliveryModel(conn);
  await ensureIndexes(conn);
  const receiver = await startReceiver(delayMs);
  const box = createSecretBox(key);
  const now = new Date(Date.now() - 1000);
  await createSubscriptionsRepository(conn).insert(
    {
      _id: newId('webhook'),
      url: receiver.url,
      events: ['*'],
      description: 'bench',
      active: true,
      disabledReason: null,
      disabledAt: null,
      secrets: [{ sealed: box.seal(box.generate()), createdAt: now, expiresAt: null }],
      failures: 0,
      failingSince: null,
      deleted: false,
      createdAt: now,
      updatedAt: now,
    },
    [],
  );
  const children: ChildProcess[] = [];
  for (let k = 0; k < replicas; k++) {
    children.push(
      spawn(process.execPath, [SERVER], {
        stdio: process.env.BENCH_WEBHOOK_LOGS ? 'inherit' : 'ignore',
        env: {
          ...process.env,
          WEBHOOKS_PORT: String(await freePort()),
          METRICS_PORT: '0',
          MONGO_URL,
          MONGO_DB: dbName,
          NATS_URL,
          NATS_NAMESPACE: names.namespace,
          LOG_LEVEL: 'warn',
          PRINCIPAL_VERIFY_KEYS: testPrincipalKeys().verifyKeys,
          WEBHOOKS_SECRET_KEY: key,
          WEBHOOKS_ALLOWED_RANGES: '127.0.0.0/8',
        },
      }),
    );
  }
  const js = jetstream(nc);
  const started = performance.now();
  const startedAt = Date.now();
  for (let i = 0; i < n; i += 200) {
    const batch = Array.from({ length: Math.min(200, n - i) }, () => event('request.created'));
    await Promise.all(
      batch.map((e) => {
        // Signed by its producer, as that service's outbox relay sends it.
        const subject = names.eventSubject(e.type);
        const data = encodeJson(e);
        const headers = testSigner(producerOf(e.type, e.resourceId)).sign(subject, data);
        return js.publish(subject, data, { msgID: e.id, headers });
      }),
    );
  }
  const model = deliveryModel(conn);
  const deadline = Date.now() + TIMEOUT_MS;
  let succeeded = 0;
  // The store is asked only once the receiver has had an attempt per event: a count reads every
  // delivery (FerretDB decodes each document; 40 counts of 2,000 cost it 3 s of CPU), and polling
  // it all through the run was the largest share of the store's CPU, not the service's work.
  while (Date.now() < deadline) {
    if (receiver.received() >= n) {
      succeeded = await model.countDocuments({ status: 'succeeded' });
      if (succeeded >= n) break;
    }
    await new Promise((r) => setTimeout(r, receiver.received() >= n ? 100 : 20));
  }
  if (succeeded < n) succeeded = await model.countDocuments({ status: 'succeeded' });
  const seconds = (performance.now() - started) / 1000;
  // When the intake had stored every delivery (the intake's share of the time, before the
  // worker's): the last insert's time, read once after the run.
  const [last] = await model.find({}, { createdAt: 1 }).sort({ createdAt: -1 }).limit(1).lean().exec();
  const storedSeconds = last ? +((last.createdAt.getTime() - startedAt) / 1000).toFixed(2) : null;
  const replicaCpuSeconds = children.map(cpuSecondsOf);
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(
    children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))),
  );
  const result = {
    label,
    replicas,
    receiverDelayMs: delayMs,
    events: n,
    succeeded,
    attempts: receiver.received(),
    seconds: +seconds.toFixed(2),
    storedSeconds,
    deliveriesPerSecond: Math.round(succeeded / seconds),
    replicaCpuSeconds,
    loadAverage: os.loadavg().map((l) => +l.toFixed(1)),
  };
  console.log(JSON.stringify(result));
  await receiver.close();
  await jsm.streams.delete(names.eventsStream).catch(() => undefined);
  await jsm.streams.delete(names.noticesStream).catch(() => undefined);
  await nc.drain();
  await conn.dropDatabase();
  await conn.close();
  return result;
}

const runs = [];
for (const [delay, n] of [
  [0, FAST_N],
  [200, SLOW_N],
] as const) {
  if (n === 0) continue;
  for (const replicas of REPLICAS)
    runs.push(await run(`${delay ? '200 ms' : 'fast'} receiver`, replicas, delay, n));
}
if (process.env.BENCH_RESULTS_FILE) {
  fs.writeFileSync(process.env.BENCH_RESULTS_FILE, JSON.stringify({ bench: 'webhooks', runs }));
}
process.exit(runs.every((r) => r.succeeded === r.events) ? 0 : 1);
