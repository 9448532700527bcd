import {
  type Actor,
  type Changes,
  type DomainEvent,
  EVENT_TYPES,
  type EventType,
  type NatsNames,
  newId,
  SYSTEM_ACTOR,
} from '@support-desk/contracts';
import { buildEvent, type EventContext } from '@support-desk/platform/core';
import { deadLetterStore, domainEventReader, type NatsConnection } from '@support-desk/platform/messaging';
import { ensureIndexes } from '@support-desk/platform/service';
import {
  publishEvent,
  publishSigned,
  signCallsLikeTheGateway,
  testEnv,
  testLogger,
  testNats,
  testVerifier,
  type Teardownable,
} from '@support-desk/platform/testing';
import type { Connection } from 'mongoose';
import { composeService } from '../src/composition.js';
import { loadAuditConfig } from '../src/config.js';
import { type Ingestion, type IngestionOptions, startIngestion } from '../src/events/ingestion.js';
import { eventModel } from '../src/store/event-model.js';

export const actors: Record<'admin' | 'agent' | 'viewer' | 'system', Actor> = {
  admin: { id: newId('user'), name: 'Ada Admin', email: 'ada@example.com', role: 'admin' },
  agent: { id: newId('user'), name: 'Al Agent', email: 'al@example.com', role: 'agent' },
  viewer: { id: newId('user'), name: 'Vi Viewer', email: 'vi@example.com', role: 'viewer' },
  system: SYSTEM_ACTOR,
};

export const ctx = (actor: Actor, ipAddress: string | null = '203.0.113.7'): EventContext => ({
  actor,
  source: actor.role === 'system' ? 'system' : 'api',
  requestId: null,
  userAgent: actor.role === 'system' ? null : 'curl/8',
  ipAddress: actor.role === 'system' ? null : ipAddress,
});

/** A valid event of `type` (resource id of the right kind unless given). */
export function makeEvent(
  type: EventType,
  opts: { resourceId?: string; actor?: Actor; changes?: Changes; at?: Date } = {},
): DomainEvent {
  const kind = type.split('.')[0];
  const resourceId =
    opts.resourceId ??
    (kind === 'request' ? newId('request') : kind === 'user' ? newId('user') : 'sla-monitor');
  const actor = opts.actor ?? (kind === 'system' ? actors.system : actors.agent);
  return buildEvent(type, resourceId, ctx(actor), opts.changes, opts.at ?? new Date());
}

export const allTypes = (): DomainEvent[] => EVENT_TYPES.map((type) => makeEvent(type));

/** Publishes events as their producers' outbox relays do (signed, keyed by id). */
export async function publish(nc: NatsConnection, names: NatsNames, events: DomainEvent[]): Promise<void> {
  await Promise.all(events.map((e) => publishEvent(nc, names, e)));
}

/** Publishes any bytes on `request.created`'s subject, signed by requests (its producer). */
export async function publishRaw(nc: NatsConnection, names: NatsNames, payload: string | Uint8Array) {
  await publishSigned(nc, names.eventSubject('request.created'), payload, { as: 'requests' });
}

export async function prepareStore(conn: Connection) {
  eventModel(conn);
  deadLetterStore(conn);
  await ensureIndexes(conn);
}

/** Ingestion with test-friendly timings, stopped at teardown. */
export async function ingest(
  t: { teardown(fn: () => unknown): void },
  deps: { nc: NatsConnection; conn: Connection; names: NatsNames },
  overrides: Partial<IngestionOptions> = {},
): Promise<Ingestion> {
  const ingestion = await startIngestion({
    ...deps,
    read: domainEventReader(deps.names, testVerifier()),
    logger: testLogger('audit'),
    durable: 'audit',
    concurrency: 256,
    batchSize: 64,
    flushMs: 20,
    maxConcurrentWrites: 4,
    maxDeliver: 5,
    ackWaitMs: 2000,
    backoffMs: [50, 100, 200],
    ...overrides,
  });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await ingestion.stop();
  });
  return {
    stats: ingestion.stats,
    async stop() {
      stopped = true;
      await ingestion.stop();
    },
  };
}

export const countEvents = (conn: Connection, filter: Record<string, unknown> = {}) =>
  eventModel(conn).countDocuments(filter);

/**
 * The service as production composes it, on `conn` and a fresh NATS namespace, configured by
 * `env` (the AUDIT_* variables); `app.inject` signs calls like the gateway (`asCaller`). With
 * `start`, its background work (ingestion, retention) runs too. Closed at teardown.
 */
export async function composeForTest(
  t: Teardownable,
  conn: Connection,
  { env = {}, start = false }: { env?: Record<string, string>; start?: boolean } = {},
) {
  const { nc, names } = await testNats(t);
  const service = await composeService({
    config: loadAuditConfig({ PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys, ...env }),
    logger: testLogger(),
    conn,
    nc,
    names,
  });
  if (start) await service.start();
  const app = signCallsLikeTheGateway(service.app, 'audit');
  t.teardown(async () => {
    await app.close();
    if (start) await service.close();
  });
  return { app, nc, names };
}
