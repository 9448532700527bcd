#!/usr/bin/env node
/**
 * `provision-streams`: the operator's step that creates (or updates) the JetStream streams the
 * services use, with their limits, as the one NATS user allowed to (`provisioner` in
 * deploy/nats.conf); no service may create, change or delete a stream. Idempotent: run it on every
 * install and upgrade (a one-shot in docker-compose.yml and `npm start`, a Helm hook Job in the
 * chart). Prints what it did as one JSON line; exits 1 when NATS does not answer in time.
 *
 *   NATS_URL=nats://provisioner:…@nats:4222 node libs/platform/dist/src/cli/provision-streams.js
 */
import { Type } from 'typebox';
import { natsNames } from '@support-desk/contracts';
import { baseConfig, configSchema, loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { connectNats, type NatsConnection } from '../nats.js';
import { startService } from '../service.js';
import { provisionStreams } from '../streams.js';

const schema = configSchema({
  LOG_LEVEL: baseConfig.LOG_LEVEL,
  NATS_URL: baseConfig.NATS_URL,
  NATS_NAMESPACE: baseConfig.NATS_NAMESPACE,
  /** Servers each stream is kept on: 1, or 3 with a cluster of three. */
  NATS_STREAM_REPLICAS: Type.Integer({ minimum: 1, maximum: 5, default: 1 }),
  /** Days an event stays in the events stream; 0: until EVENTS_MAX_BYTES. */
  EVENTS_MAX_AGE_DAYS: Type.Integer({ minimum: 0, maximum: 36_500, default: 0 }),
  /** Bytes the events stream may hold before its oldest events go; 0: no bound. */
  EVENTS_MAX_BYTES: Type.Integer({ minimum: 0, default: 0 }),
  /** How long to wait for NATS to answer. */
  PROVISION_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 60_000 }),
});

async function connectWithin(url: string, timeoutMs: number): Promise<NatsConnection> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await connectNats({ url, name: 'provisioner' });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

startService('provision-streams', async () => {
  const config = loadConfig(schema);
  const logger = createLogger({ service: 'provision-streams', level: config.LOG_LEVEL });
  const nc = await connectWithin(config.NATS_URL, config.PROVISION_TIMEOUT_MS);
  try {
    const names = natsNames(config.NATS_NAMESPACE);
    const streams = await provisionStreams(nc, names, {
      replicas: config.NATS_STREAM_REPLICAS,
      eventsMaxAgeDays: config.EVENTS_MAX_AGE_DAYS,
      eventsMaxBytes: config.EVENTS_MAX_BYTES,
    });
    logger.info({ namespace: names.namespace, streams }, 'streams provisioned');
  } finally {
    await nc.close();
  }
});
