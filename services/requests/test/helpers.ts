import { jetstreamManager } from '@nats-io/jetstream';
import type { DomainEvent, NatsNames, Principal } from '@support-desk/contracts';
import type { HttpApp } from '@support-desk/platform/http';
import type { NatsConnection, OutboxRelay } from '@support-desk/platform/messaging';
import type { PeriodicTask } from '@support-desk/platform/core';
import {
  asPrincipal,
  bodyAsSent,
  IdentityDouble,
  signCallsLikeTheGateway,
  type Teardownable,
  testCountedMongo,
  testLogger,
  testMongo,
  testEnv,
  testNats,
} from '@support-desk/platform/testing';
import type { Connection } from 'mongoose';
import { composeService } from '../src/composition.js';
import { defaultRequestsConfig, type RequestsConfig } from '../src/config.js';
import type { Deps } from '../src/use-cases/deps.js';

/** A controllable clock for the app under test. */
export class TestClock {
  constructor(public current = new Date('2030-01-01T09:00:00.000Z')) {}
  now = () => new Date(this.current.getTime());
  advance(ms: number) {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export interface Harness {
  app: HttpApp;
  conn: Connection;
  nc: NatsConnection;
  names: NatsNames;
  relay: OutboxRelay;
  /** The trash's purge pass (`runNow`). */
  trashPurge: PeriodicTask<number>;
  /** The bulk-jobs worker (`runNow`). */
  bulkWorker: PeriodicTask<number>;
  /** The purge of bulk jobs past their retention (`runNow`). */
  bulkJobsPurge: PeriodicTask<number>;
  /** The use cases' dependencies, as the composition root built them. */
  deps: Deps;
  clock: TestClock;
  identity: IdentityDouble;
  /** Stops answering as identity (NATS then has no responder for its subjects). */
  stopIdentity: () => void;
  config: RequestsConfig;
  call: (
    principal: Principal,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: unknown,
    /** Extra request headers (If-Match, If-None-Match, …). */
    headers?: Record<string, string>,
  ) => Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  /** Every event published on this test's stream so far (after the relay is idle). */
  events: (filter?: { resourceId?: string; type?: string }) => Promise<DomainEvent[]>;
}

export async function harness(
  t: Teardownable,
  overrides: Partial<RequestsConfig> = {},
  /**
   * `counted`: a connection whose commands `roundTripCounter` can count (round-trips.test.ts);
   * `relayPollIntervalMs`: the relay's sweep interval (200 ms unless given).
   */
  { counted = false, relayPollIntervalMs = 200 }: { counted?: boolean; relayPollIntervalMs?: number } = {},
): Promise<Harness> {
  const conn = counted ? await testCountedMongo(t, 'req') : await testMongo(t, 'req');
  const { nc, names } = await testNats(t);
  const logger = testLogger('requests');
  const clock = new TestClock();
  const config = defaultRequestsConfig({
    SLA_MONITOR_ENABLED: false,
    PRINCIPAL_VERIFY_KEYS: testEnv.principalKeys.verifyKeys,
    ...overrides,
  });
  const identity = new IdentityDouble(nc, names);
  const stopIdentity = identity.serve();
  const service = await composeService({
    config,
    logger,
    conn,
    nc,
    names,
    clock: clock.now,
    relayPollIntervalMs,
  });
  await service.start();
  const { relay, deps } = service;
  const app = signCallsLikeTheGateway(service.app, 'requests');
  t.teardown(async () => {
    await app.close();
    await service.close();
    stopIdentity();
  });
  const jsm = await jetstreamManager(nc);
  return {
    app,
    conn,
    nc,
    names,
    relay,
    trashPurge: service.trashPurge,
    bulkWorker: service.bulkWorker,
    bulkJobsPurge: service.bulkJobsPurge,
    deps,
    clock,
    identity,
    stopIdentity,
    config,
    async call(principal, method, url, payload, headers = {}) {
      const res = await app.inject({
        method,
        url,
        headers: {
          ...headers,
          ...asPrincipal(principal, {
            audience: 'requests',
            method,
            url,
            ...bodyAsSent(method, url, payload),
          }),
        },
        ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
      });
      // FerretDB v1 (local/test store) does not make single-document updates atomic: the relay's
      // outbox removal racing the next write to the same request can lose that write. Tests
      // therefore let the relay settle after each write (MongoDB 7 in production is atomic).
      if (method !== 'GET') await relay.idle();
      const text = res.body;
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // non-JSON (downloads)
      }
      return { status: res.statusCode, body, headers: res.headers };
    },
    async events(filter = {}) {
      await relay.idle();
      const info = await jsm.streams.info(names.eventsStream);
      const out: DomainEvent[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq++) {
        const m = await jsm.streams.getMessage(names.eventsStream, { seq });
        if (!m) continue;
        const e = m.json<DomainEvent>();
        if (filter.resourceId && e.resourceId !== filter.resourceId) continue;
        if (filter.type && e.type !== filter.type) continue;
        out.push(e);
      }
      return out;
    },
  };
}

export const validBody = (overrides: Record<string, unknown> = {}) => ({
  title: 'Printer on fire',
  description: 'The printer on floor 3 is literally on fire.',
  priority: 'high',
  ...overrides,
});

/** A multipart upload body, as a client sends one. */
export const BOUNDARY = '----sdtestboundary7MA4YWxkTrZu0gW';

export function multipartBody(
  parts: { name: string; filename?: string; type?: string; data: Buffer }[],
): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`;
    chunks.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${p.type ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      p.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}
