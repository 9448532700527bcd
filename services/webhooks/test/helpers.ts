import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import {
  type Changes,
  type DomainEvent,
  type EventType,
  type NatsNames,
  newId,
} from '@support-desk/contracts';
import { buildEvent, systemContext } from '@support-desk/platform/core';
import { decodeDomainEvent, type NatsConnection } from '@support-desk/platform/messaging';
import type { Connection } from 'mongoose';
import {
  asCaller,
  eventually,
  publishEvent,
  signCallsLikeTheGateway,
  testEnv,
  testLogger,
  testMongo,
  testNats,
  testPrincipal,
  type Teardownable,
  uniqueName,
} from '@support-desk/platform/testing';
import { composeService } from '../src/composition.js';
import { loadWebhooksConfig } from '../src/config.js';
import type { Send } from '../src/events/sender.js';

export const admin = asCaller(testPrincipal('admin'));

export { type Received, startReceiver } from '@support-desk/platform/testing';

/** Test timings: retries in a fraction of a second, loopback allowed, a quick poll. */
export const FAST = {
  WEBHOOKS_RETRY_SCHEDULE_MS: '100,200,300',
  WEBHOOKS_POLL_MS: '50',
  WEBHOOKS_ALLOWED_RANGES: '127.0.0.0/8,::1/128',
  WEBHOOKS_CONNECT_TIMEOUT_MS: '1000',
  WEBHOOKS_RESPONSE_TIMEOUT_MS: '1500',
  WEBHOOKS_LEASE_MS: '8000',
};

/** What replicas of one deployment share: the store, the NATS namespace and the secret key. */
export interface Shared {
  conn: Connection;
  nc: NatsConnection;
  names: NatsNames;
  key: string;
}

export const secretKey = () => randomBytes(32).toString('base64');

/**
 * The service as production composes it, on a fresh database and NATS namespace, with its
 * background work started; `app.inject` signs calls like the gateway. Closed at teardown.
 */
export async function composeForTest(
  t: Teardownable,
  {
    env = {},
    shared,
    wrapSend,
    start = true,
  }: {
    env?: Record<string, string>;
    shared?: Shared;
    wrapSend?: (send: Send) => Send;
    /** false: the API only (no intake, worker or relay), e.g. beside replicas run as processes. */
    start?: boolean;
  } = {},
) {
  const conn = shared?.conn ?? (await testMongo(t, 'webhooks'));
  const { nc, names } = shared ? { nc: shared.nc, names: shared.names } : await testNats(t);
  const key = shared?.key ?? secretKey();
  const service = await composeService({
    config: loadWebhooksConfig({
      PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys,
      WEBHOOKS_SECRET_KEY: key,
      ...FAST,
      ...env,
    }),
    logger: testLogger('webhooks'),
    conn,
    nc,
    names,
    ...(wrapSend ? { wrapSend } : {}),
  });
  if (start) await service.start();
  const app = signCallsLikeTheGateway(service.app, 'webhooks');
  t.teardown(async () => {
    await app.close();
    if (start) await service.close();
  });
  return { app, service, conn, nc, names, key };
}

/** Publishes events as their producers' outbox relays do (signed, keyed by id). */
export async function publish(nc: NatsConnection, names: NatsNames, events: DomainEvent[]) {
  for (const e of events) await publishEvent(nc, names, e);
}

export const event = (type: EventType, resourceId = newId('request'), changes?: Changes) =>
  buildEvent(type, resourceId, systemContext(), changes, new Date());

type App = Awaited<ReturnType<typeof composeForTest>>['app'];

/** Creates a subscription through the API; its answer (with the secret). */
export async function subscribe(app: App, body: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: admin, payload: body });
  if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`);
  return res.json().data as { id: string; secret: string; [k: string]: unknown };
}

export async function deliveries(app: App, id: string, query = '') {
  const res = await app.inject({
    method: 'GET',
    url: `/v1/webhooks/${id}/deliveries${query}`,
    headers: admin,
  });
  return res.json().data.deliveries as {
    id: string;
    status: string;
    eventType: string;
    eventId: string | null;
    attempts: { status: number | null; error: string | null }[];
    nextAttemptAt: string | null;
  }[];
}

export async function getWebhook(app: App, id: string) {
  const res = await app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: admin });
  return res.json().data as { active: boolean; disabledReason: string | null; [k: string]: unknown };
}

/** Every event on the stream from now on, read by a consumer of the test's own. */
export async function eventsFrom(nc: NatsConnection, stream: string) {
  const jsm = await jetstreamManager(nc);
  const durable = uniqueName('check');
  await jsm.consumers.add(stream, { durable_name: durable, ack_policy: 'none' as never });
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  const seen: DomainEvent[] = [];
  return async (count: number, resourceId: string) => {
    await eventually(
      async () => {
        const m = await consumer.next({ expires: 1000 });
        if (m) seen.push(decodeDomainEvent(m.data) as DomainEvent);
        return seen.filter((e) => e.resourceId === resourceId).length >= count;
      },
      { what: `${count} events of ${resourceId}` },
    );
    return seen.filter((e) => e.resourceId === resourceId);
  };
}
