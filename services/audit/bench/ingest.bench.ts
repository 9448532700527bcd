// Ingestion benchmark: publish N events to a fresh namespace on the real NATS, run the audit
// ingestion (production settings unless overridden) into a fresh database, time until all are
// stored. Reports events/s and the publish-to-stored lag (storedAt - publish time) p50/p99.
//
//   npm run bench -w @support-desk/audit            (BENCH_EVENTS=20000 by default)
//   BENCH_EVENTS=5000 AUDIT_BATCH_SIZE=512 npm run bench -w @support-desk/audit
import fs from 'node:fs';
import { jetstream } from '@nats-io/jetstream';
import { EVENT_TYPES, natsNames } from '@support-desk/contracts';
import { connectMongo, ensureIndexes } from '@support-desk/platform/service';
import {
  connectNats,
  deadLetterStore,
  domainEventReader,
  encodeJson,
  jetstreamApi,
  provisionStreams,
} from '@support-desk/platform/messaging';
import { createLogger } from '@support-desk/platform/core';
import {
  producerOf,
  testPrincipalKeys,
  testSigner,
  testVerifier,
  uniqueName,
} from '@support-desk/platform/testing';
import { ingestionSettings, loadAuditConfig } from '../src/config.js';
import { startIngestion } from '../src/events/ingestion.js';
import { eventModel } from '../src/store/event-model.js';
import { makeEvent } from '../test/helpers.js';

const N = Number(process.env.BENCH_EVENTS ?? 20_000);
const PUBLISH_WINDOW = 1000; // outstanding publish acks
// The bench calls no API: any key satisfies the service's configuration.
const config = loadAuditConfig({ ...process.env, PRINCIPAL_VERIFY_KEYS: testPrincipalKeys().verifyKeys });
const logger = createLogger({ service: 'audit-bench', level: process.env.LOG_LEVEL ?? 'warn' });

const names = natsNames(uniqueName('bench'));
const conn = await connectMongo({ url: config.MONGO_URL, dbName: uniqueName('audit_bench_') });
const nc = await connectNats({ url: config.NATS_URL, name: 'audit-bench' });
await provisionStreams(nc, names);
const jsm = await jetstreamApi(nc);
eventModel(conn);
deadLetterStore(conn);
await ensureIndexes(conn);

const ingestion = await startIngestion({
  nc,
  conn,
  names,
  logger,
  read: domainEventReader(names, testVerifier()),
  ...ingestionSettings(config),
  durable: 'audit',
  statsLogMs: 0,
});

const js = jetstream(nc);
const publishedAt = new Map<string, number>();
const started = performance.now();
const t0 = Date.now();
let inFlight: Promise<unknown>[] = [];
for (let i = 0; i < N; i++) {
  const e = makeEvent(EVENT_TYPES[i % EVENT_TYPES.length]);
  publishedAt.set(e.id, Date.now());
  // Signed by its producer, as that service's outbox relay sends it.
  const subject = names.eventSubject(e.type);
  const data = encodeJson(e);
  const headers = testSigner(producerOf(e.type, e.resourceId)).sign(subject, data);
  inFlight.push(js.publish(subject, data, { msgID: e.id, headers }));
  if (inFlight.length >= PUBLISH_WINDOW) {
    await Promise.all(inFlight);
    inFlight = [];
  }
}
await Promise.all(inFlight);
const publishMs = performance.now() - started;

const model = eventModel(conn);
const deadline = Date.now() + 120_000;
let stored = 0;
while (Date.now() < deadline) {
  stored = ingestion.stats().acked;
  if (stored >= N) break;
  await new Promise((r) => setTimeout(r, 20));
}
const totalMs = performance.now() - started;
const count = await model.countDocuments();

const docs = await model.find({}, { _id: 1, storedAt: 1 }).lean<{ _id: string; storedAt: Date }[]>();
const lags = docs.map((d) => d.storedAt.getTime() - (publishedAt.get(d._id) ?? t0)).sort((a, b) => a - b);
const pct = (p: number) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))];

const result = {
  events: N,
  stored: count,
  publishSeconds: +(publishMs / 1000).toFixed(2),
  totalSeconds: +(totalMs / 1000).toFixed(2),
  eventsPerSecond: Math.round(count / (totalMs / 1000)),
  lagMs: { p50: pct(50), p99: pct(99), max: lags[lags.length - 1] },
  settings: {
    concurrency: config.AUDIT_CONCURRENCY,
    batchSize: config.AUDIT_BATCH_SIZE,
    flushMs: config.AUDIT_BATCH_FLUSH_MS,
    concurrentWrites: config.AUDIT_BATCH_WRITES,
  },
  batches: ingestion.stats().batches,
  duplicates: ingestion.stats().duplicates,
};
console.log(JSON.stringify(result, null, 2));
// `npm run bench` prints every workspace's figures in one table from these files.
if (process.env.BENCH_RESULTS_FILE)
  fs.writeFileSync(process.env.BENCH_RESULTS_FILE, JSON.stringify({ bench: 'audit', ...result }));
console.log(
  `audit ingestion: ${result.eventsPerSecond} events/s (${count}/${N} stored in ${result.totalSeconds} s), ` +
    `publish-to-stored lag p50 ${result.lagMs.p50} ms, p99 ${result.lagMs.p99} ms`,
);

await ingestion.stop();
await jsm.streams.delete(names.eventsStream).catch(() => undefined);
await jsm.streams.delete(names.noticesStream).catch(() => undefined);
await nc.drain();
await conn.dropDatabase();
await conn.close();
process.exit(count === N ? 0 : 1);
